/**
 * Request bodies under the handler's limits (D25): read as a stream that stops at `maxBodyBytes`
 * (413), measured for nesting on the text before it is parsed (422), parsed as JSON (422 when
 * malformed).
 */
import { invalidInput } from "../errors.js";
import { jsonTextDepth } from "../json.js";
import { HttpError } from "./errors.js";
import type { Limits } from "./options.js";

/**
 * Reads a body as text, refusing it with 413 once it passes `max` bytes: at once when its
 * `Content-Length` says so, else as soon as the bytes read pass it (the rest is never read).
 */
export async function readBodyText(request: Request, max: number): Promise<string> {
  const tooLarge = () =>
    new HttpError(413, `The request body is larger than the server's limit of ${max} bytes (maxBodyBytes); send a smaller body`, {
      connection: "close",
    });
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\s*\d+\s*$/.test(declared) && Number(declared) > max) throw tooLarge();
  if (!request.body) return "";
  const reader = request.body.getReader();
  // Bytes are kept as they came and decoded at the end: a refused body then costs what was read,
  // without the garbage of decoding it piece by piece.
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      throw new HttpError(400, "The request body could not be read (the connection failed while it was being sent)");
    }
    if (chunk.done) break;
    size += chunk.value.byteLength;
    if (size > max) {
      chunks.length = 0;
      void reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(chunk.value);
  }
  const decoder = new TextDecoder();
  let text = "";
  for (let i = 0; i < chunks.length; i++) {
    text += decoder.decode(chunks[i], { stream: true });
    chunks[i] = EMPTY; // decoded: let it go
  }
  return text + decoder.decode();
}
const EMPTY = new Uint8Array(0);

/**
 * The JSON body of `request` (undefined when it is empty), refused with 413 past
 * `limits.maxBodyBytes` and 422 when it nests deeper than `limits.maxDepth` or is malformed.
 */
export async function readJson(request: Request, limits: Limits): Promise<unknown> {
  const text = await readBodyText(request, limits.maxBodyBytes);
  if (!text.trim()) return undefined;
  // D25: measured on the text, so a 100,000-level body is refused before it is built.
  if (jsonTextDepth(text, limits.maxDepth) > limits.maxDepth) {
    throw invalidInput(`The JSON body nests deeper than ${limits.maxDepth} levels of objects and arrays (maxDepth)`, [
      { path: "", message: `nested deeper than ${limits.maxDepth} levels` },
    ]);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw invalidInput(`Malformed JSON body: ${(err as Error).message}`, [{ path: "", message: "malformed JSON" }]);
  }
}
