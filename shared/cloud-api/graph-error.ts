/** The Graph API's error body, `{ error: { message, type, code, error_data, fbtrace_id } }`, in one place. No dependencies. */
export const GRAPH_PATH = /^\/v\d+\.\d+(\/|$)/;

export function graphErrorBody(code: number, type: string, message: string, details: string, traceId: string, subcode?: number) {
  return {
    error: {
      message: /^\(#\d+\)/.test(message) ? message : `(#${code}) ${message}`,
      type,
      code,
      ...(subcode !== undefined ? { error_subcode: subcode } : {}),
      error_data: { messaging_product: 'whatsapp', details },
      fbtrace_id: traceId,
    },
  };
}
