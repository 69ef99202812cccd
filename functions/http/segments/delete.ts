/** DELETE /segments/{id}: removes the segment and its member list; the contacts are kept. */
import { endpoint } from '#shared/http/endpoint.ts';
import { deleteSegment } from '#shared/segments/service.ts';

export const { handler, spec } = endpoint(
  { route: 'DELETE /segments/{id}', summary: 'Delete a segment', responses: { 200: '{ success: true, id }', 404: 'not found' } },
  async ({ auth, params }) => {
    const { id } = await deleteSegment(auth.businessId, (params as any)?.id);
    return { status: 200, body: { success: true, id } };
  },
);
