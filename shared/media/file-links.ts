/**
 * A media file's download link on the service's own host. Meta's media URLs are fetched with the access token
 * (`Authorization: Bearer ...`, as its reference shows), and an S3 pre-signed URL refuses any request that carries
 * a second authentication; so the service hands out `{base}/media/v1/files/{token}`, which answers with a redirect
 * to the pre-signed URL whether a token came along or not (clients drop the Authorization header when a redirect
 * leaves the host). The token is the pre-signed URL itself: it expires with it, and only a URL of the media bucket,
 * in the form this service signs, is ever redirected to.
 */
import { onFirstUse } from '#shared/lang/on-first-use.ts';
import { presignGet } from './storage.ts';

export const FILE_PATH = '/media/v1/files/';

export const fileLink = (baseUrl: string, presignedUrl: string): string =>
  `${baseUrl}${FILE_PATH}${Buffer.from(presignedUrl, 'utf8').toString('base64url')}`;

/** The bucket's own URL form (origin, and the bucket path locally), as this service's S3 client signs it: once a container. */
const bucketUrl = onFirstUse(async () => {
  const probe = new URL(await presignGet('_', 1));
  return { origin: probe.origin, prefix: probe.pathname.slice(0, -1) };
});

/** The pre-signed URL a token carries, when it is one of the media bucket's; undefined otherwise. */
export async function fileTarget(token: string): Promise<string | undefined> {
  let target: URL;
  try {
    target = new URL(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const { origin, prefix } = await bucketUrl();
  const signed = target.searchParams.has('X-Amz-Signature') && target.searchParams.has('X-Amz-Expires');
  return target.origin === origin && target.pathname.startsWith(prefix) && target.pathname.length > prefix.length && signed ? target.href : undefined;
}
