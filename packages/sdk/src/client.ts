/**
 * A typed client over openapi-fetch whose calls answer the data itself and throw PartnerApiError on
 * any other outcome, plus page iterators. Path, parameters, body and result are all typed from the
 * generated `paths`, so an operation added to the document is callable (with retries, idempotency and
 * token refresh) as soon as the types are regenerated.
 */
import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import { PartnerApiError } from './errors.js';
import { type BearerAuth, createTransport, type TransportOptions } from './transport.js';

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** The paths of `Paths` that have `Method`. */
export type PathsWithMethod<Paths, Method extends HttpMethod> = {
  [P in keyof Paths]: Paths[P] extends { [K in Method]: unknown } ? P : never;
}[keyof Paths];

type RequiredKeysOf<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? never : K }[keyof T];
type InitParam<Init> =
  RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];
type SuccessOf<R> = R extends { data: infer D; error?: never } ? ([D] extends [never] ? undefined : D) : never;

/** One HTTP method: resolves with the answer's data (undefined for 204), throws PartnerApiError otherwise. */
export type CallMethod<Paths extends {}, Method extends HttpMethod> = <
  Path extends PathsWithMethod<Paths, Method> & keyof Paths,
  Init extends MaybeOptionalInit<Paths[Path], Method & keyof Paths[Path]>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<
  SuccessOf<FetchResponse<Paths[Path][Method & keyof Paths[Path]] & Record<string | number, unknown>, Init, 'application/json'>>
>;

type JsonOk<Op> = Op extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
type Page = { items: unknown[]; page: number; pageSize: number; total: number };
/** A list that also pages by cursor (the request log) says where the next page starts. */
type CursorPage = Page & { nextStartingAfter?: string | null };

/** The GET paths that answer a page (`{ items, page, pageSize, total }`): the ones the iterators take. */
export type PagedPaths<Paths> = {
  [P in keyof Paths]: Paths[P] extends { get: infer Op } ? (JsonOk<Op> extends Page ? P : never) : never;
}[keyof Paths];
export type PageOf<Paths, P extends keyof Paths> = Paths[P] extends { get: infer Op } ? JsonOk<Op> : never;
export type ItemOf<Paths, P extends keyof Paths> = PageOf<Paths, P> extends { items: Array<infer I> } ? I : never;

/** The `page` and `pageSize` of a paged GET are the iterator's own; every other parameter is the caller's. */
export type PageInit<Paths, P extends keyof Paths> = Paths[P] extends { get: { parameters: infer Params } }
  ? Omit<Params, 'query'> & {
      query?: Omit<NonNullable<Params extends { query?: infer Q } ? Q : never>, 'page'> & { pageSize?: number };
    }
  : never;

export interface TypedClient<Paths extends {}> {
  GET: CallMethod<Paths, 'get'>;
  POST: CallMethod<Paths, 'post'>;
  PUT: CallMethod<Paths, 'put'>;
  PATCH: CallMethod<Paths, 'patch'>;
  DELETE: CallMethod<Paths, 'delete'>;
  /**
   * Every item of a paged list, page after page (`pageSize` 50 unless given), until the last page. Stops
   * early when the loop breaks. Offset paging over a list that changes meanwhile can repeat or skip an
   * item; for a complete sync of orders, page by `updatedSince` and keep the newest `updatedAt` you saw.
   */
  paginate<P extends PagedPaths<Paths> & keyof Paths>(
    url: P,
    params?: PageInit<Paths, P>,
  ): AsyncIterableIterator<ItemOf<Paths, P>>;
  /** The same as `paginate`, one whole page (with its `total`) at a time. */
  pages<P extends PagedPaths<Paths> & keyof Paths>(url: P, params?: PageInit<Paths, P>): AsyncIterableIterator<PageOf<Paths, P>>;
  /** The underlying openapi-fetch client (answers `{ data, error, response }` and throws nothing), same transport. */
  raw: Client<Paths>;
}

export interface ClientOptionsBase extends TransportOptions {
  /** Extra headers on every request (e.g. a User-Agent of your integration). */
  headers?: Record<string, string>;
}

const MAX_PAGE = 10_000;

export function createTypedClient<Paths extends {}>(
  baseUrl: string,
  options: ClientOptionsBase,
  extra: { headers?: Record<string, string>; auth?: BearerAuth; middleware?: Middleware[] } = {},
): TypedClient<Paths> {
  const raw = createClient<Paths>({
    baseUrl,
    fetch: createTransport(options, extra.auth),
    headers: { ...options.headers, ...extra.headers },
  });
  for (const m of extra.middleware ?? []) raw.use(m);

  const call =
    (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE') =>
    async (url: string, init?: Record<string, unknown>): Promise<unknown> => {
      const target = `${baseUrl.replace(/\/$/, '')}${url}`;
      let result: { data?: unknown; error?: unknown; response: Response };
      try {
        result = await (raw[method] as (u: string, i?: unknown) => Promise<typeof result>)(url, init);
      } catch (err) {
        if ((err as Error)?.name === 'AbortError' || (err as Error)?.name === 'TimeoutError') throw err;
        throw new PartnerApiError({
          status: 0,
          code: 'ERR_NETWORK',
          message: `${method} ${target} failed: ${(err as Error)?.message ?? String(err)}`,
          method,
          url: target,
          cause: err,
        });
      }
      if (result.response.ok) return result.data;
      throw PartnerApiError.fromResponse({ method, url: result.response.url || target }, result.response, result.error);
    };

  const GET = call('GET');

  async function* pages(url: string, params: { query?: Record<string, unknown> } & Record<string, unknown> = {}) {
    const query = { ...params.query };
    const pageSize = (query.pageSize as number | undefined) ?? 50;
    // A list whose answers carry `nextStartingAfter` is followed by cursor, to any depth (its `total`
    // may be capped and its page numbers end early); the others by page number.
    let cursor: string | undefined;
    for (let page = 1; cursor !== undefined || page <= MAX_PAGE; page++) {
      const pageQuery = cursor === undefined ? { ...query, page, pageSize } : { ...query, startingAfter: cursor, pageSize };
      const data = (await GET(url, { params: { ...params, query: pageQuery } })) as CursorPage;
      yield data;
      if (data.nextStartingAfter !== undefined) {
        if (data.nextStartingAfter === null) return;
        cursor = data.nextStartingAfter;
        continue;
      }
      if (data.items.length < pageSize || page * pageSize >= data.total) return;
    }
  }

  async function* paginate(url: string, params?: Record<string, unknown>) {
    for await (const page of pages(url, params)) yield* page.items;
  }

  return {
    GET,
    POST: call('POST'),
    PUT: call('PUT'),
    PATCH: call('PATCH'),
    DELETE: call('DELETE'),
    paginate,
    pages,
    raw,
  } as unknown as TypedClient<Paths>;
}

/** Narrows a path map to the paths starting with `Prefix`. */
export type PathsUnder<Paths, Prefix extends string> = Pick<Paths, Extract<keyof Paths, `${Prefix}${string}`>>;
