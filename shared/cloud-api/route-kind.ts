/** Which routes are the Cloud-API-compatible (Graph) ones: `/{version}/...` and their versionless twins. */

/** A versionless Graph route's key as its versioned twin's (`POST /{id}/messages` → `POST /{version}/{id}/messages`). */
export const versionedKey = (routeKey: string): string => routeKey.replace(/^([A-Z]+) \/\{id\}\//, '$1 /{version}/{id}/');

export const isCloudApiRoute = (routeKey: string): boolean => versionedKey(routeKey).includes(' /{version}/');
