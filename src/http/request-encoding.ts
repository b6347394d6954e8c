/**
 * Compressed request bodies (SPEC G-4): `Content-Encoding: gzip | x-gzip | deflate | br | zstd`, decoded
 * with the runtime's zlib (node:zlib in Bun, no dependency) before the guard parses the JSON.
 *
 * Who sends them: Codex compresses its Responses request bodies with zstd when it is logged in with
 * ChatGPT and talks to the built-in OpenAI provider (openai/codex, codex-rs/features/src/lib.rs:
 * `enable_request_compression`, stable, on by default, "Compress request bodies (zstd) when sending
 * streaming requests to codex-backend"; the codex 0.171.0 binary logs "Compressed request body with
 * zstd"), which is what a user gets who points `openai_base_url` at the gateway instead of the
 * `[model_providers.switchyard]` table `switchyard setup codex` writes. SDKs and proxies send gzip.
 *
 * Every stage is bounded by `limit` through zlib's `maxOutputLength`, which stops inflating once the
 * output would pass it: a 1 GiB gzip bomb (1 MiB on the wire) is refused after ~32 MiB of output, ~130 ms,
 * never held whole. The async forms run off the event loop: while that bomb was refused (65–130 ms) the
 * loop's longest gap was 2.9 ms (Bun 1.4.5, measured), so other requests keep being served.
 */
import { constants as bufferConstants } from "node:buffer";
import { brotliDecompress, gunzip, inflate, inflateRaw, zstdDecompress, type ZlibOptions } from "node:zlib";
import type { DecodeBody, DecodeFailure } from "../../pipeline/ports.ts";

/** A zlib decoder in callback form (what node:zlib's async functions are). */
type Decoder = (buf: Uint8Array, opts: ZlibOptions, cb: (err: Error | null, out: Uint8Array) => void) => void;

/**
 * `deflate` is the zlib format (RFC 9110 8.4.1.2), but some clients send raw deflate (Bun's own
 * `Bun.deflateSync`, older servers): a body without a zlib header (RFC 1950: compression method 8 and a
 * header checksum divisible by 31) is inflated raw.
 */
function deflateDecoder(bytes: Uint8Array): Decoder {
  const zlibHeader = bytes.length >= 2 && (bytes[0]! & 0x0f) === 8 && ((bytes[0]! << 8) | bytes[1]!) % 31 === 0;
  return (zlibHeader ? inflate : inflateRaw) as unknown as Decoder;
}

/** The decoder of a content coding (lower-case), or undefined for one the gateway does not know. */
function decoderOf(coding: string, bytes: Uint8Array): Decoder | undefined {
  switch (coding) {
    case "gzip":
    case "x-gzip":
      return gunzip as unknown as Decoder;
    case "deflate":
      return deflateDecoder(bytes);
    case "br":
      return brotliDecompress as unknown as Decoder;
    case "zstd":
      return zstdDecompress as unknown as Decoder;
    default:
      return undefined;
  }
}

/** The content codings {@link decodeRequestBody} decodes, for messages (`gzip, deflate, br, zstd`). */
export const DECODED_CODINGS = "gzip, deflate, br and zstd";

/**
 * Most codings one body may list (`identity` not counted). Each stage may decode up to the body limit,
 * so the work of a body is about this many times the limit. Without a cap, `gzip` listed 101 times (a
 * 504-byte header) over a 127 KB body of 100 nested stored gzip layers of ~30 MB each took 7.7 s of CPU
 * to decode at the default 32 MiB limit (Bun 1.4.5, measured), and a header can list it thousands of
 * times. Clients send one coding; curl undoes at most 5 (`MAX_ENCODE_STACK`), so a stack of 3 is plenty.
 */
export const MAX_CODINGS = 3;

/** One stage: the decoded bytes, or the failure (past `limit`: `too_large`; any other zlib error: `corrupt`). */
function decodeStage(decode: Decoder, bytes: Uint8Array, coding: string, limit: number): Promise<Uint8Array | DecodeFailure> {
  return new Promise((resolve) => {
    try {
      // zlib refuses a maxOutputLength past the largest buffer (4 GiB in Bun) with a RangeError, which
      // made every compressed body a 413 under a larger `server.max_body_bytes`: no output exceeds it anyway.
      decode(bytes, { maxOutputLength: Math.min(Math.max(1, limit), bufferConstants.MAX_LENGTH) }, (err, out) => {
        if (!err) return resolve(out);
        const code = (err as { code?: unknown }).code;
        resolve({ problem: err instanceof RangeError || code === "ERR_BUFFER_TOO_LARGE" ? "too_large" : "corrupt", coding });
      });
    } catch (err) {
      resolve({ problem: err instanceof RangeError ? "too_large" : "corrupt", coding });
    }
  });
}

/**
 * {@link DecodeBody} on node:zlib: the header's codings (comma-separated, case-insensitive, `identity`
 * skipped) undone last to first, each bounded by `limit` (see the module comment). A coding it does not
 * know is `unsupported`, and more than {@link MAX_CODINGS} codings `stacked`, before any decoding.
 */
export const decodeRequestBody: DecodeBody = async (bytes, encoding, limit) => {
  const codings = encoding
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  for (const coding of codings) if (decoderOf(coding, new Uint8Array(0)) === undefined) return { problem: "unsupported", coding };
  if (codings.length > MAX_CODINGS) return { problem: "stacked", coding: codings.length > 8 ? `${codings.slice(0, 8).join(", ")}, …` : codings.join(", ") };
  let out = bytes;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!;
    const decoded = await decodeStage(decoderOf(coding, out)!, out, coding, limit);
    if (!(decoded instanceof Uint8Array)) return decoded;
    out = decoded;
  }
  return out;
};
