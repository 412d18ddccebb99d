/** Pagination headers of the search routes, with the agent server's meaning (D11). */

/** The headers, as the OpenAPI document describes them. */
export const PAGING_HEADERS = {
  "x-pagination-total": "How many records match in all.",
  "x-pagination-next": "The offset of the next page; absent on the last page.",
} as const;

/** The headers of one page: the total, and the next offset only when more records follow. */
export function pageHeaders(total: number, offset: number, limit: number): Headers {
  const headers = new Headers({ "x-pagination-total": String(total) });
  if (offset + limit < total) headers.set("x-pagination-next", String(offset + limit));
  return headers;
}
