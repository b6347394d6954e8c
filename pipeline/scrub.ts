/**
 * Secret scrubbing (SPEC 2.4, O-2, O-4): provider credentials and client keys never reach a client, a
 * route trace or a log line, even when an upstream echoes them in an error body ("Incorrect API key
 * provided: sk-…").
 *
 * Two passes over a text: every known secret (the account credentials and client keys the instance
 * holds, and the key this request presented) is replaced exactly, raw and JSON-escaped; then anything
 * shaped like a well-known credential (every shape redaction knows, pipeline/key-shapes.ts: OpenAI/
 * Anthropic `sk-…`, switchyard `sy-…`, Google `AIza…`/`ya29.…`, GitHub `ghp_…`, GitLab `glpat-…`, Slack
 * `xoxb-…`, AWS `AKIA…`, JWTs, PEM private keys, …; and `Bearer …`) is replaced too, for secrets the
 * instance does not hold.
 */

import { KEY_SHAPE_AFTER, KEY_SHAPE_BEFORE, KEY_SHAPES_SOURCE, replacePrivateKeyBlocks } from "./key-shapes.ts";
import type { RouteTrace } from "./ports.ts";

/** What a scrubbed secret is replaced with. */
export const REDACTED = "[redacted]";

/** Secrets shorter than this are not replaced exactly (too likely to match ordinary text). */
const MIN_SECRET_LENGTH = 8;

/**
 * Credential shapes replaced even when the secret is not known to the instance: every shape redaction
 * recognises (pipeline/key-shapes.ts; PEM private-key blocks by `replacePrivateKeyBlocks`, not a regex
 * here), and a few looser ones of the scrubber's own (a false positive in a trace or a recording costs
 * little).
 */
const CREDENTIAL_SHAPES: RegExp[] = [
  new RegExp(`${KEY_SHAPE_BEFORE}${KEY_SHAPES_SOURCE}${KEY_SHAPE_AFTER}`, "g"),
  /\bsk-[A-Za-z0-9_-]{12,}/g, // OpenAI, Anthropic (sk-ant-…), most OpenAI-compatible vendors
  /\bsy-[A-Za-z0-9_-]{12,}/g, // switchyard client keys and admin tokens
  /\bAIza[A-Za-z0-9_-]{30,}/g, // Google API keys
  /\bya29\.[A-Za-z0-9_.-]{12,}/g, // Google OAuth access tokens
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, // JWTs (OAuth access/id tokens)
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{12,}/gi, // an Authorization header value quoted back
];

/**
 * Returns `text` with every known secret and every credential-shaped token replaced by
 * {@link REDACTED}. `secrets` may contain empty or short strings; those are ignored.
 */
export function scrubText(text: string, secrets: Iterable<string> = []): string {
  const known = [...new Set([...secrets].filter((s) => typeof s === "string" && s.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  // Carried reasoning first, while its base64url is whole (a shape replaced inside it would spoil the decoding).
  const open = text.includes(CARRIED_TAG)
    ? text.replace(CARRIED_VALUE, (whole, value: string) => {
        const decoded = Buffer.from(value, "base64url").toString("utf8");
        const clean = scrubPlain(decoded, known);
        return clean === decoded ? whole : CARRIED_TAG + Buffer.from(clean, "utf8").toString("base64url");
      })
    : text;
  return scrubPlain(open, known);
}

/**
 * The tag of reasoning a Gemini client's call carries on its `thoughtSignature` (formats/gemini/
 * thought-carry.ts: `sy|thoughts|<base64url of JSON>`): the thinking text in it is base64url, out of
 * sight of a scrub of the plain text, so {@link scrubText} decodes each such value, scrubs the decoded
 * text (one level: a tag inside it is not decoded again) and encodes it back when something was
 * replaced. One scan of the text, each value decoded once: linear in the text's length.
 */
const CARRIED_TAG = "sy|thoughts|";
const CARRIED_VALUE = /sy\|thoughts\|([A-Za-z0-9_-]+)/g;

/** {@link scrubText}'s two passes over plain text, `known` filtered and longest first. */
function scrubPlain(text: string, known: readonly string[]): string {
  let out = text;
  for (const s of known) {
    if (out.includes(s)) out = out.split(s).join(REDACTED);
    const escaped = JSON.stringify(s).slice(1, -1);
    if (escaped !== s && out.includes(escaped)) out = out.split(escaped).join(REDACTED);
  }
  out = replacePrivateKeyBlocks(out, () => REDACTED);
  for (const re of CREDENTIAL_SHAPES) out = out.replace(re, REDACTED);
  return out;
}

/**
 * Where a reply driver gets the secrets to scrub a streamed reply's in-band error of
 * (pipeline/scrub-events.ts): the attempt's, the instance's and the key the request presented
 * (pipeline/attempt-loop.ts). Asked only when the reply has an error, never for ordinary content.
 */
export interface SecretSource {
  secrets(): string[];
}

/** The {@link SecretSource} of a driver made without one: no known secret, only credential shapes are scrubbed. */
export const NO_SECRETS: SecretSource = { secrets: () => [] };

/** Characters of error text a route trace keeps of an attempt's failure (cut after scrubbing). */
export const TRACE_TEXT_MAX = 300;

/**
 * `clean`, a text already scrubbed ({@link scrubText}), cut to at most `end` characters (UTF-16 code
 * units). The cut never ends inside a {@link REDACTED} marker (it is left out whole) nor between the
 * halves of a surrogate pair. Cut after scrubbing, never before: a secret across the cut would be
 * kept in part, and a part is no longer recognised.
 */
export function cutScrubbed(clean: string, end: number): string {
  if (clean.length <= end) return clean;
  let at = Math.max(0, end);
  // A marker that starts before the cut and ends after it.
  const open = clean.lastIndexOf(REDACTED, at - 1);
  if (open >= 0 && open + REDACTED.length > at) at = open;
  const last = clean.charCodeAt(at - 1);
  if (last >= 0xd800 && last <= 0xdbff) at--;
  return clean.slice(0, at);
}

/**
 * The scrubbed text of `head`, a prefix of `whole` (a text cut at some bound), with nothing of a secret
 * the cut at the end of `head` goes through: `whole` must run on past that cut by more than the longest
 * secret. Both are scrubbed ({@link scrubText}); the answer is the scrubbed `head` up to where it stops
 * agreeing with the scrubbed `whole` (a secret across the cut is whole in `whole`, so replaced there,
 * and in part in `head`, so not), never ending inside a marker ({@link cutScrubbed}). A `head` that is
 * all of `whole` is simply scrubbed.
 */
export function scrubbedHead(whole: string, head: string, secrets: Iterable<string> = []): string {
  const list = [...secrets];
  const all = scrubText(whole, list);
  if (head.length >= whole.length) return all;
  const part = scrubText(head, list);
  const n = Math.min(all.length, part.length);
  let same = 0;
  while (same < n && all.charCodeAt(same) === part.charCodeAt(same)) same++;
  return cutScrubbed(all, same);
}

/**
 * `text` scrubbed ({@link scrubText}) as a whole, then cut to at most `max` characters
 * ({@link cutScrubbed}): the text a route trace keeps of an error (SPEC O-2), so that a secret the cut
 * goes through is replaced whole instead of surviving in part.
 */
export function scrubAndCut(text: string, max: number, secrets: Iterable<string> = []): string {
  return cutScrubbed(scrubText(text, secrets), max);
}

/**
 * A JSON-serialisable value with every string scrubbed ({@link scrubText}): a scrubbed copy, or `value`
 * itself when nothing in it needed scrubbing (the common case costs no re-parse).
 */
export function scrubValue<T>(value: T, secrets: Iterable<string> = []): T {
  const text = JSON.stringify(value);
  const clean = scrubText(text, secrets);
  return clean === text ? value : (JSON.parse(clean) as T);
}

/**
 * Whether a route trace carries text that may echo a secret (SPEC O-2): its error answer (which may
 * echo what the client sent, e.g. a model name) or a failed attempt's upstream error text (which may
 * echo a credential). A trace without either needs no {@link scrubValue}. A loop over the attempts,
 * not `some` with a closure: it runs for every request (docs/performance.md item 120).
 */
export function traceNeedsScrub(trace: Pick<RouteTrace, "error" | "attempts">): boolean {
  if (trace.error !== undefined) return true;
  const attempts = trace.attempts;
  for (let i = 0; i < attempts.length; i++) if (attempts[i]!.error !== undefined) return true;
  return false;
}

/**
 * The keys README and `switchyard setup` tell a client to send when the gateway needs none
 * (`placeholder` in README's exports, `switchyard` as setup's `PLACEHOLDER_KEY`). No secret, and
 * words of the gateway's own messages: scrubbed as the key a request presented, every "switchyard"
 * in the answer to a CLI set up without a key read "[redacted]" ("set OPENAI_API_KEY before starting
 * [redacted] without a config file", "[redacted] login claude-code").
 */
export const CLIENT_KEY_PLACEHOLDERS: readonly string[] = ["placeholder", "switchyard"];

/**
 * The client key a request presented (Authorization, x-api-key, Gemini's x-goog-api-key, and with
 * `url` a `?key=` query parameter), for scrubbing its own echoes; a placeholder
 * ({@link CLIENT_KEY_PLACEHOLDERS}) is none.
 */
export function presentedSecrets(headers: Headers, url?: string): string[] {
  const out: string[] = [];
  const add = (value: string) => {
    if (!CLIENT_KEY_PLACEHOLDERS.includes(value)) out.push(value);
  };
  const auth = headers.get("authorization");
  if (auth) add(auth.replace(/^\s*\w+\s+/, "").trim());
  const x = headers.get("x-api-key");
  if (x) add(x.trim());
  const g = headers.get("x-goog-api-key");
  if (g) add(g.trim());
  const q = url?.indexOf("?") ?? -1;
  if (url !== undefined && q >= 0) {
    const key = new URLSearchParams(url.slice(q + 1)).get("key");
    if (key) add(key.trim());
  }
  return out;
}

/**
 * Scrubs the body of a non-streamed error Response (status ≥ 400, at most 1 MiB); status and headers
 * are kept. Other responses are returned as they are.
 */
export async function scrubErrorResponse(res: Response, secrets: Iterable<string>): Promise<Response> {
  if (res.status < 400 || !res.body) return res;
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("text/event-stream")) return res;
  const text = await res.text();
  const clean = text.length > 1024 * 1024 ? text : scrubText(text, secrets);
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  return new Response(clean, { status: res.status, statusText: res.statusText, headers });
}
