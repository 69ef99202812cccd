/**
 * Checks on a subscription's URL when it is saved. The decisive check runs at connect time in
 * shared/net/safe-fetch.ts (on the resolved address, every delivery); this one refuses early what can
 * never be delivered: non-http(s) schemes, credentials in the URL, plain http and loopback, private,
 * link-local or metadata literals in deployed stacks (config.allowPrivateNetworkTargets false).
 */
import { createHash } from 'node:crypto';
import { config } from '#shared/config.ts';
import { checkAddress, isIpLiteral } from '#shared/net/address-policy.ts';

const LOCAL_NAMES = /(^|\.)(localhost|local|internal|localdomain)$/i;

/** Why `raw` cannot be a webhook target, or undefined when it can. */
export function targetProblem(raw: string, allowPrivate: boolean = config.allowPrivateNetworkTargets): string | undefined {
  // The URL parser drops tabs and line breaks silently: the URL stored would not be the one called.
  if (/[\u0000-\u0020\u007f]/.test(raw)) return 'must not contain spaces or control characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (!allowPrivate && url.protocol !== 'https:') return 'must use https';
  if (url.username || url.password) return 'must not contain credentials';
  const host = url.hostname;
  if (isIpLiteral(host)) {
    const verdict = checkAddress(host, allowPrivate);
    if (!verdict.allowed) return `must not point to a ${verdict.reason}`;
  } else if (!allowPrivate && LOCAL_NAMES.test(host.replace(/\.$/, ''))) {
    return 'must not point to a local host name';
  }
  return undefined;
}

/**
 * What makes two subscriptions the same target: the URL as parsed (scheme and host case, default port
 * and the like do not tell URLs apart, nor a fragment, which is never sent) and the same deliveries (`*`
 * beside names is `*`). A business may hold one subscription per target (a second would only double
 * every delivery).
 */
export function targetFingerprint(url: string, events: readonly string[]): string {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (parsed) parsed.hash = '';
  const delivered = events.includes('*') ? ['*'] : [...new Set(events)].sort();
  return createHash('sha256').update(JSON.stringify([parsed?.href ?? url, delivered])).digest('base64url');
}
