/** A TCP port free on 127.0.0.1 right now, for a server whose port must be known before it starts. */
import { createServer, type AddressInfo } from 'node:net';

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
