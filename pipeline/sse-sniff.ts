/**
 * An event stream without its label (SPEC R-9, 6.4): some OpenAI-compatible servers and proxies answer a
 * streamed request with a well-formed SSE body labelled `text/plain`, `application/octet-stream`, or
 * with no Content-Type at all. The official SDKs read such a body as the stream it is; the commit point
 * does too: when the request streamed and the reply's type is one of those, the body's first bytes are
 * read and, when they start like SSE (a `data:`, `event:`, `id:` or `retry:` field, or a `:` comment,
 * after an optional byte-order mark and blank lines; WHATWG HTML §9.2.6), the reply is read as SSE.
 * A JSON body (or anything else) keeps the whole-body lane. Replies labelled `text/event-stream` or
 * JSON are never read here: the common lanes pay nothing for this.
 */
import type { UpstreamReply } from "./execute.ts";
import type { ByteReader, ReadResult } from "./committed-reads.ts";

/** Bytes read at most to find the first field of an unlabelled body (blank lines and a BOM before it). */
const SNIFF_LIMIT = 4096;

/** The field names an SSE line may start with (a `:` comment is told apart first). */
const SSE_FIELDS = ["data:", "event:", "id:", "retry:", "data\n", "data\r"] as const;

/**
 * Whether a 2xx reply to a streamed request may be an unlabelled event stream: it has a body and its
 * Content-Type is absent, `text/plain` or `application/octet-stream` (a `text/event-stream` reply is SSE
 * by its label; a JSON one is the whole-body lane's).
 */
export function mayBeUnlabelledSse(reply: UpstreamReply, upstreamStream: boolean): boolean {
  if (!upstreamStream || reply.body === null) return false;
  const type = reply.headers.get("content-type");
  if (type === null) return true;
  const t = type.trimStart().toLowerCase();
  return t === "" || t.startsWith("text/plain") || t.startsWith("application/octet-stream");
}

/**
 * Whether `text` (the start of a body) starts like SSE: after an optional BOM and blank lines, a `:`
 * comment or one of the fields `data`, `event`, `id`, `retry`. Undefined when `text` is only a BOM and
 * blank lines (more bytes are needed to tell).
 */
export function startsLikeSse(text: string): boolean | undefined {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (i < text.length && (text[i] === "\n" || text[i] === "\r")) i++;
  if (i === text.length) return undefined;
  if (text[i] === ":") return true;
  for (const field of SSE_FIELDS) {
    if (text.startsWith(field, i)) return true;
    // a field name cut by the end of what was read: tell once more bytes came
    if (text.length - i < field.length && field.startsWith(text.slice(i))) return undefined;
  }
  return false;
}

/**
 * Reads the first bytes of an unlabelled reply ({@link mayBeUnlabelledSse}) and says whether it is
 * SSE; the reply it gives back has the same status and headers and a body that yields every byte, those
 * read here first. Waits at most `waitMs` for them (the provider's idle timeout): an upstream silent that
 * long is left to the commit point's idle deadline, the body read as JSON, and the reply given back says
 * since when it was silent (`quiet`: performance.now() of the sniff's start or of its last bytes, and
 * the chunks held), so that deadline counts from there: one idle timeout in all, not the sniff's and then
 * a whole one more.
 * A read that fails is the new body's failure, met by the commit point as it would have met it.
 */
export async function sniffSse(reply: UpstreamReply, waitMs: number): Promise<{ reply: UpstreamReply; sse: boolean }> {
  const reader = reply.body!.getReader() as unknown as ByteReader;
  const held: Uint8Array[] = [];
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  let text = "";
  let sse = false;
  let pending: Promise<ReadResult> | undefined;
  let failure: { e: unknown } | undefined;
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** When the upstream last sent bytes (or the sniff began); kept on the reply when the sniff timed out. */
  let quietSince = performance.now();
  let timedOut = false;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), waitMs)));
  try {
    for (let n = 0; n < SNIFF_LIMIT; ) {
      const read = reader.read();
      let r: ReadResult | "timeout";
      try {
        r = await Promise.race([read, timeout]);
      } catch (e) {
        failure = { e };
        break;
      }
      if (r === "timeout") {
        pending = read;
        timedOut = true;
        break;
      }
      quietSince = performance.now();
      if (r.done) {
        ended = true;
        break;
      }
      held.push(r.value);
      n += r.value.byteLength;
      text += decoder.decode(r.value, { stream: true });
      const says = startsLikeSse(text);
      if (says !== undefined) {
        sse = says;
        break;
      }
    }
  } finally {
    clearTimeout(timer);
  }
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i < held.length) return controller.enqueue(held[i++]!);
      if (failure) return controller.error(failure.e);
      if (ended) return controller.close();
      const read = pending ?? reader.read();
      pending = undefined;
      const r = await read;
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  // Field by field: the reply may be fetch's own Response, whose fields are getters a spread would not copy.
  const out: UpstreamReply = { status: reply.status, headers: reply.headers, body, url: reply.url };
  if (reply.credential !== undefined) out.credential = reply.credential;
  if (sse) out.sse = true;
  if (timedOut) out.quiet = { since: quietSince, held: held.length };
  return { reply: out, sse };
}
