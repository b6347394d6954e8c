/**
 * Replies shared by the admin routes (SPEC 9.3): the error shape `{error: {message, type, param, code}}`
 * with 400 (bad input, `param` naming the field), 401 / 403 (admin access refused), 404 (unknown object),
 * 409 (read-only or taken), 415 (a body that is not declared JSON, or a `text/plain` one that is not JSON: {@link contentTypeRefusal}), 503 (the store cannot answer: {@link storeErrorStatus}), and
 * valibot parsing of bodies and queries into that shape.
 */
import * as v from "valibot";
import { unknownKeysMessage } from "../unknown-keys.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../formats/json-depth.ts";
import type { StoreErrorCode } from "../store/types.ts";
import { DEFAULT_BODY_TIMEOUT_MS, readRequestBody, WWW_AUTHENTICATE } from "../../pipeline/index.ts";

/**
 * The status of an admin reply for a store failure: 409 for a read-only or taken object, 503 when the store cannot answer (a shared database that cannot be reached, SPEC D-2,
 * or a store closing at shutdown, or a shared database that refused a change made by hand: `rejected`), 400 for the rest (a value the store refuses).
 */
export function storeErrorStatus(code: StoreErrorCode): number {
  if (code === "conflict" || code === "read_only") return 409;
  if (code === "unavailable" || code === "closed" || code === "rejected") return 503;
  return 400;
}

/**
 * The 409 for a change to an implicit account (the `<provider>-keyless` account a `*-compatible`
 * provider without accounts is called with, `source: "implicit"` in `GET /accounts`): it has no
 * credential or setting to change; the provider's config entry decides it.
 */
export function implicitAccountError(account: { id: string; providerId: string }): Response {
  return adminError(
    409,
    `Account ${account.id} is the implicit keyless account of provider ${account.providerId} (a provider without accounts is called without a key); there is nothing to change on it: give ${account.providerId} an account, or remove the provider, in the config file.`,
    "id",
    "implicit_account",
  );
}

/**
 * An admin error reply. `param` is the offending field's path (`targets[0].model`), when one is at fault.
 * A 401 carries `WWW-Authenticate: Bearer` (RFC 9110 15.5.2; the scheme the OpenAPI document declares).
 */
export function adminError(status: number, message: string, param: string | null = null, code: string | null = null, extra: Record<string, unknown> = {}): Response {
  const type =
    status === 404 ? "not_found_error" : status === 409 ? "conflict_error" : status === 401 ? "authentication_error" : status === 403 ? "permission_error" : status === 503 ? "unavailable_error" : "invalid_request_error";
  return new Response(JSON.stringify({ error: { message, type, param, code, ...extra } }), {
    status,
    headers: status === 401 ? { "content-type": "application/json", "www-authenticate": WWW_AUTHENTICATE } : { "content-type": "application/json" },
  });
}

/**
 * A JSON object body with exactly these fields (valibot `strictObject`): a field it does not know is
 * refused, not ignored, so a misspelt or unsupported field (`tags` for `tag`) cannot pass unnoticed.
 * The message names every unknown field of that object (valibot stops at the first), suggests the
 * intended one for a typo, and lists the fields `what` has; a missing field is "required". The issue's
 * path is the first unknown field, so the 400 of {@link parseInput} carries it as `param`. The message
 * is the config loader's (src/unknown-keys.ts), worded for a body: "field", all of them.
 */
export function strictBody<E extends v.ObjectEntries>(entries: E, what: string) {
  const fields = Object.keys(entries);
  return v.strictObject(entries, (issue) => {
    if (issue.expected === "never") return unknownKeysMessage(issue, fields, { noun: "field", what, all: true });
    if (issue.input === undefined && issue.expected?.startsWith('"')) return "required";
    return `${what} must be a JSON object`;
  });
}

/** Whether a valibot issue is an object's unknown field (its path ends at that field). */
const isUnknownField = (issue: v.BaseIssue<unknown>) => issue.type === "strict_object" && issue.expected === "never";

/**
 * Parses `input` with `schema`. On failure, the 400 reply names the first issue's path (dot and bracket
 * notation, e.g. `targets[0].model`) in `param` and at the start of `message` (once: a schema message
 * that begins with the field's name is used as it is).
 */
export function parseInput<S extends v.GenericSchema>(schema: S, input: unknown, what = "body"): { ok: true; value: v.InferOutput<S> } | { ok: false; response: Response } {
  // valibot's object schemas accept arrays (they are objects to JS): a body must be a JSON object.
  if (what === "body" && input !== undefined && (input === null || typeof input !== "object" || Array.isArray(input))) {
    return { ok: false, response: adminError(400, `The request body must be a JSON object; got ${describeJson(input)}.`) };
  }
  const r = v.safeParse(schema, input);
  if (r.success) return { ok: true, value: r.output };
  const issue = r.issues[0];
  const path = issuePath(issue);
  if (!path && what === "body" && input === undefined) return { ok: false, response: adminError(400, "The request needs a JSON object body.") };
  // A message that already starts with the field's name ("since must look like …") is not prefixed
  // again ("since: since must …").
  // An unknown field's message names it (and its siblings): led by the object it is in, not by itself.
  const parent = isUnknownField(issue) ? issuePath({ ...issue, path: issue.path?.slice(0, -1) } as v.BaseIssue<unknown>) : undefined;
  const lead = parent !== undefined ? (parent ? `${parent}: ` : "") : path && issue.message.startsWith(`${path} `) ? "" : `${path || what}: `;
  return { ok: false, response: adminError(400, `${lead}${issue.message}`, path || null) };
}

/** "an array", "null", "a number", … for messages about a JSON value. */
function describeJson(x: unknown): string {
  if (x === null) return "null";
  if (x === undefined) return "no body";
  if (Array.isArray(x)) return "an array";
  return typeof x === "object" ? "an object" : `a ${typeof x}`;
}

/**
 * Reads and validates a JSON request body in one step: the route's whole input handling is
 *
 * ```ts
 * .post("/things", async ({ request }) => {
 *   const input = await readBody(request, ThingCreate, deps.bodyTimeoutMs?.());
 *   if (!input.ok) return input.response;   // 400 {error: {message, type, param}}, or the 408 of readJson
 *   …input.value…
 * }, { parse: "none" })
 * ```
 *
 * `parse: "none"` keeps Elysia from reading the body first (its own parser answers malformed JSON
 * with its own error, and waits for the body without a deadline). The body is read within
 * `bodyTimeoutMs` ({@link readJson}). Malformed JSON is a 400; an empty body is validated as `emptyAs` (default
 * undefined, which an object schema refuses: pass `{}` when every field is optional).
 */
export async function readBody<S extends v.GenericSchema>(
  request: Request,
  schema: S,
  bodyTimeoutMs: number | undefined,
  emptyAs?: unknown,
): Promise<{ ok: true; value: v.InferOutput<S> } | { ok: false; response: Response }> {
  const raw = await readJson(request, bodyTimeoutMs);
  if (!raw.ok) return raw;
  return parseInput(schema, raw.value === undefined ? emptyAs : raw.value);
}

/** The path of a valibot issue as `a.b[0].c`; empty at the root. */
export function issuePath(issue: v.BaseIssue<unknown>): string {
  let out = "";
  for (const item of issue.path ?? []) {
    const k = item.key;
    if (typeof k === "number") out += `[${k}]`;
    else out += out ? `.${String(k)}` : String(k);
  }
  return out;
}

/**
 * Reads a JSON request body within `bodyTimeoutMs` ms (`server.body_timeout_ms`, default
 * {@link DEFAULT_BODY_TIMEOUT_MS}) through the client API's timed read (pipeline/guard.ts `readBody`):
 * a body not fully arrived that long after the read began (a declared Content-Length never met, a body
 * that trickles in) is the 408 `request_timeout` with `Connection: close` (the rest of the body must
 * not be read as the next request; closing frees the socket), one the client stopped sending a 400;
 * both in the admin error shape (the dashboard's sign-in answers in the same). The size is bounded
 * before routing (src/http/server.ts `bodyLimit`: 1 MiB, with a Content-Length). Undefined for an empty body; a 400 reply
 * for malformed JSON and for JSON nesting arrays and objects more than {@link MAX_JSON_DEPTH} levels
 * deep (checked before parsing, formats/json-depth.ts): `JSON.parse` takes 100,000 levels, but a stored
 * combo's params that deep held the event loop for most of a second and then ran the config checks out
 * of stack (a 500), and every request through such a combo would re-encode them (SPEC 2.6: bad input is a 400).
 * A non-empty body whose Content-Type is not JSON is the 415 of {@link contentTypeRefusal}, except
 * `text/plain` (what `fetch` sends for a string body without a Content-Type, {@link isPlainTextContentType}):
 * read as JSON when it parses as JSON, its 415 when it does not.
 */
export async function readJson(request: Request, bodyTimeoutMs = DEFAULT_BODY_TIMEOUT_MS): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  const read = await readRequestBody(request, Number.POSITIVE_INFINITY, bodyTimeoutMs);
  if (!read.ok) {
    const response = adminError(read.error.status, read.error.message, null, read.error.code ?? null);
    if (read.error.status === 408) response.headers.set("connection", "close");
    return { ok: false, response };
  }
  const text = utf8.decode(read.value); // as request.text() did: a byte that is not UTF-8 becomes U+FFFD
  if (text.trim() === "") return { ok: true, value: undefined };
  const contentType = request.headers.get("content-type");
  // `text/plain` is what `fetch` sends for a string body without a Content-Type: read as JSON when it
  // is JSON (its 415 only when it is not); any other type that is not JSON is the 415 at once.
  const plain = contentType !== null && isPlainTextContentType(contentType);
  const unsupported = plain ? undefined : contentTypeRefusal(contentType);
  if (unsupported) return { ok: false, response: unsupported };
  if (nestsDeeperThan(text)) return { ok: false, response: adminError(400, `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`) };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    if (e instanceof RangeError) return { ok: false, response: adminError(400, "The body is nested too deeply.") };
    return { ok: false, response: plain ? contentTypeRefusal(contentType)! : adminError(400, "The body is not valid JSON.") };
  }
}

const utf8 = new TextDecoder();

/** Whether a Content-Type value names JSON: `application/json` or a `+json` type (RFC 6839 3.1), parameters allowed, any case. */
export function isJsonContentType(value: string): boolean {
  const type = value.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json$/.test(type);
}

/** Whether a Content-Type value is `text/plain`, parameters allowed, any case (what `fetch` sends for a string body). */
export function isPlainTextContentType(value: string): boolean {
  return value.split(";")[0]!.trim().toLowerCase() === "text/plain";
}

/**
 * The 415 for a request body declared as something other than JSON (the OpenAPI document declares
 * `application/json` bodies only), or undefined when `contentType` (the header's value, null when
 * absent) is JSON or absent: a body without a Content-Type is read as JSON ({@link readJson} reads a
 * `text/plain` body that parses as JSON too, and answers this 415 for one that does not). curl's `-d` sends
 * `application/x-www-form-urlencoded`; that refusal says to add the header. The switchyard CLI
 * (src/cli/admin-request.ts) and the dashboard (src/dashboard/client/api.ts) send `application/json`.
 */
export function contentTypeRefusal(contentType: string | null): Response | undefined {
  if (contentType === null || contentType.trim() === "" || isJsonContentType(contentType)) return undefined;
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  const hint =
    type === "application/x-www-form-urlencoded"
      ? " (what curl -d sends when no type is given): add -H 'content-type: application/json'"
      : type === "text/plain"
        ? " and it is not valid JSON (a text/plain body is read when it is JSON): send JSON, as application/json"
        : ": send it as application/json";
  return adminError(415, `The body must be JSON; its Content-Type is ${JSON.stringify(contentType.slice(0, 100))}${hint}.`, null, "unsupported_media_type");
}
