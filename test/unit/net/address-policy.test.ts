import { checkAddress, isIpLiteral } from '#shared/net/address-policy.ts';

describe('address policy', () => {
  it.each([
    ['127.0.0.1'], ['127.255.0.9'], ['10.0.0.1'], ['172.16.5.4'], ['192.168.1.1'], ['169.254.169.254'], ['169.254.1.1'],
    ['100.64.0.1'], ['0.0.0.0'], ['224.0.0.1'], ['255.255.255.255'], ['::1'], ['::'], ['fe80::1'], ['fd00:ec2::254'],
    ['fc00::1'], ['::ffff:127.0.0.1'], ['::ffff:10.0.0.1'], ['64:ff9b::a00:1'], ['2002:a00:1::'], ['[::1]'],
  ])('refuses %s by default', (address) => {
    // Act
    const verdict = checkAddress(address, false);
    // Assess
    expect(verdict.allowed).toBe(false);
  });

  it.each([['8.8.8.8'], ['93.184.216.34'], ['2606:4700::1111'], ['::ffff:8.8.8.8']])('allows public %s', (address) => {
    expect(checkAddress(address, false)).toEqual({ allowed: true });
  });

  it('allows loopback and private targets when private targets are enabled, but never metadata or multicast', () => {
    // Act / Assess
    expect(checkAddress('127.0.0.1', true).allowed).toBe(true);
    expect(checkAddress('10.1.2.3', true).allowed).toBe(true);
    expect(checkAddress('::1', true).allowed).toBe(true);
    expect(checkAddress('169.254.169.254', true).allowed).toBe(false);
    expect(checkAddress('fd00:ec2::254', true).allowed).toBe(false);
    expect(checkAddress('224.0.0.1', true).allowed).toBe(false);
  });

  it.each([['64:ff9b::a9fe:a9fe'], ['64:ff9b::169.254.169.254'], ['64:ff9b:1::a9fe:a9fe'], ['2002:a9fe:a9fe::1'], ['2001:0:4136:e378:8000:63bf:5601:5601'], ['64:ff9b::a9fe:aa02']])(
    'refuses %s, which carries a metadata address to a NAT64 translator or a tunnel, even when private targets are allowed',
    (address) => {
      expect(checkAddress(address, true)).toMatchObject({ allowed: false, reason: expect.stringContaining('carries the metadata address') });
      expect(checkAddress(address, false).allowed).toBe(false);
    },
  );

  it('allows a NAT64 or 6to4 address of a private IPv4 in local mode', () => {
    expect(checkAddress('64:ff9b::a00:1', true).allowed).toBe(true);
    expect(checkAddress('2002:a00:1::', true).allowed).toBe(true);
  });

  it.each([['::127.0.0.1'], ['[::127.0.0.1]'], ['::a9fe:a9fe'], ['[::a9fe:a9fe]'], ['::8.8.8.8'], ['0:0:0:0:0:0:10.0.0.1'], ['::1:0'], ['::ffff']])(
    'refuses the IPv4-compatible range ::/96 (%s), even when private targets are allowed',
    (address) => {
      // Act / Assess
      expect(checkAddress(address, false)).toMatchObject({ allowed: false, reason: expect.stringContaining('IPv4-compatible') });
      expect(checkAddress(address, true).allowed).toBe(false);
    },
  );

  it('refuses what is not an address and recognises literals', () => {
    expect(checkAddress('example.com', false).allowed).toBe(false);
    expect(isIpLiteral('[::1]')).toBe(true);
    expect(isIpLiteral('10.0.0.1')).toBe(true);
    expect(isIpLiteral('example.com')).toBe(false);
  });
});
