/**
 * What an attempt keeps of the endpoint's answer for the attempt log (docs/decisions-log.md, 'Webhook operations'): its headers and
 * the first 4 KiB of its body, as text, never parsed. A body that is not text (a binary content type,
 * NUL bytes, or bytes that are not UTF-8) is stored as a short note, never as bytes. Header values are
 * bounded too: an endpoint cannot make the log grow without limit.
 */
export const MAX_RESPONSE_BYTES = 4 * 1024;
const MAX_HEADERS = 50;
const MAX_HEADER_VALUE = 1024;

export interface CapturedResponse {
  headers: Record<string, string>;
  body: string;
}

const BINARY_TYPE =
  /^(image|audio|video|font)\/|^application\/(octet-stream|pdf|zip|gzip|x-|vnd\.(?!api\+json))|protobuf|msgpack/i;

/** `raw`: the headers as undici gives them; `bytes`: what was read of the body; `complete`: the body ended within it. */
export function captureResponse(
  raw: Record<string, string | string[] | undefined>,
  bytes: Buffer,
  complete: boolean,
): CapturedResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (Object.keys(headers).length >= MAX_HEADERS) break;
    const text = Array.isArray(value) ? value.join(', ') : value;
    headers[name.toLowerCase()] = text.length > MAX_HEADER_VALUE ? `${text.slice(0, MAX_HEADER_VALUE)}…` : text;
  }
  return { headers, body: bodyText(bytes.subarray(0, MAX_RESPONSE_BYTES), complete, headers['content-type']) };
}

function bodyText(bytes: Buffer, complete: boolean, contentType: string | undefined): string {
  const size = complete ? `${bytes.length} bytes` : `more than ${MAX_RESPONSE_BYTES} bytes`;
  const note = `[binary body not stored: ${size}${contentType ? ` of ${contentType}` : ''}]`;
  if (contentType && BINARY_TYPE.test(contentType)) return note;
  // A body cut at 4 KiB may end inside a character: drop that character's first bytes, not the body.
  const text = decodeUtf8(complete ? bytes : bytes.subarray(0, bytes.length - incompleteTail(bytes)));
  if (text === null || text.includes('\u0000')) return note;
  return text;
}

function decodeUtf8(bytes: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** How many bytes at the end of `bytes` start a UTF-8 sequence that the cut left unfinished. */
function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back];
    if ((b & 0xc0) !== 0x80) {
      // A lead byte: how long its sequence should be.
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      return need > back ? back : 0;
    }
  }
  return 0;
}
