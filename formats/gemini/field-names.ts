/**
 * Gemini request field names written in snake_case (`system_instruction`, `generation_config`,
 * `inline_data: {mime_type, data}`, `function_declarations`) → the lowerCamelCase names parse.ts reads.
 * The Gemini API takes both (protobuf's JSON mapping accepts a field's proto name as well as its JSON
 * name), and Google's own REST examples write `system_instruction` and `inline_data`; read only in
 * camelCase, such a request lost its system prompt, generation config, tools and images on a
 * translated target (the native lane forwards the body as it came).
 *
 * Only the members of the request's own messages are renamed, following their shapes (Content, Part,
 * Blob, FunctionCall, GenerationConfig, Tool, Schema …); values that are the client's own data keep
 * every key as written: `functionCall.args`, `functionResponse.response`, a JSON schema
 * (`parametersJsonSchema`, `responseJsonSchema`), a Schema's `properties` names, `enum`, `default`,
 * `example`. A camelCase member already present wins over its snake_case twin. Pure: returns the body
 * itself when nothing is written in snake_case, else a copy (the client's body is not changed).
 */
import { isObj } from "../json.ts";

/** How a member's value is walked: a message (its keys renamed), a map of messages, or kept whole. */
type Shape = { readonly [member: string]: Shape | "keep" | SchemaShape | MapOf };
/** A Gemini Schema: keys renamed, `properties` a map of schemas, `items` / `anyOf` schemas. */
interface SchemaShape {
  readonly schema: true;
}
/** A map whose keys are the client's names and whose values have `of`'s shape. */
interface MapOf {
  readonly mapOf: Shape | SchemaShape;
}

const KEEP = "keep" as const;
const SCHEMA: SchemaShape = { schema: true };
const BLOB: Shape = {};
const FUNCTION_CALL: Shape = { args: KEEP };
const FUNCTION_RESPONSE: Shape = { response: KEEP, parts: { inlineData: BLOB, fileData: BLOB } };
const PART: Shape = {
  inlineData: BLOB,
  fileData: BLOB,
  functionCall: FUNCTION_CALL,
  functionResponse: FUNCTION_RESPONSE,
  executableCode: {},
  codeExecutionResult: {},
  videoMetadata: {},
};
const CONTENT: Shape = { parts: PART };
const FUNCTION_DECLARATION: Shape = { parameters: SCHEMA, response: SCHEMA, parametersJsonSchema: KEEP, responseJsonSchema: KEEP };
const TOOL: Shape = { functionDeclarations: FUNCTION_DECLARATION };
const GENERATION_CONFIG: Shape = {
  responseSchema: SCHEMA,
  responseJsonSchema: KEEP,
  _responseJsonSchema: KEEP,
  thinkingConfig: {},
  speechConfig: KEEP,
  imageConfig: {},
};
const REQUEST: Shape = {
  contents: CONTENT,
  systemInstruction: CONTENT,
  tools: TOOL,
  toolConfig: { functionCallingConfig: {} },
  generationConfig: GENERATION_CONFIG,
  safetySettings: {},
  labels: KEEP,
  generateContentRequest: KEEP, // countTokens' wrapper: walked on its own by the caller when used
};

/** `max_output_tokens` → `maxOutputTokens`; a name without `_` (or only a leading one) is itself. */
function camel(name: string): string {
  return name.replace(/(?<=[a-z0-9])_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * The request `body` with the members of its messages in lowerCamelCase (see the module comment).
 * Anything that is not an object is returned as is.
 */
export function camelCaseRequest(body: unknown): unknown {
  if (!isObj(body)) return body;
  const wrapped = body.contents === undefined && isObj(body.generateContentRequest) ? body.generateContentRequest : undefined;
  if (!hasSnakeCase(body, REQUEST) && !(wrapped && hasSnakeCase(wrapped, REQUEST))) return body;
  const out = walk(body, REQUEST);
  if (isObj(out) && isObj(out.generateContentRequest) && out.contents === undefined) {
    const inner = walk(out.generateContentRequest, REQUEST);
    if (inner !== out.generateContentRequest) return { ...out, generateContentRequest: inner };
  }
  return out;
}

/**
 * Whether `walk` would rename anything in `value`: the same descent, reading keys only (no copy, no
 * regular expression), so a body written in camelCase, what Gemini CLI and the SDKs send, costs a key
 * scan (a Gemini CLI-sized request with 12 tools: ~1–3 µs, against ~9–36 µs for the walk itself).
 */
function hasSnakeCase(value: unknown, shape: Shape | SchemaShape | MapOf | "keep"): boolean {
  if (shape === KEEP) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasSnakeCase(value[i], shape)) return true;
    return false;
  }
  if (!isObj(value)) return false;
  if ("mapOf" in shape) {
    for (const k in value) if (hasSnakeCase(value[k], (shape as MapOf).mapOf)) return true;
    return false;
  }
  const schema = "schema" in shape;
  for (const k in value) {
    if (k.indexOf("_", 1) > 0) return true; // `walk` renames it (or drops it for its camelCase twin)
    const child = schema ? schemaChild(k) : (shape as Shape)[k];
    if (child !== undefined && hasSnakeCase(value[k], child)) return true;
  }
  return false;
}

function walk(value: unknown, shape: Shape | SchemaShape | MapOf | "keep"): unknown {
  if (shape === KEEP) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((v, i) => {
      const w = walk(v, shape);
      if (w !== v) (copy ??= value.slice())[i] = w;
    });
    return copy ?? value;
  }
  if (!isObj(value)) return value;
  if ("mapOf" in shape) {
    let copy: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      const w = walk(v, (shape as MapOf).mapOf);
      if (w !== v) (copy ??= { ...value })[k] = w;
    }
    return copy ?? value;
  }
  const schema = "schema" in shape;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const name = camel(k);
    // The camelCase member wins over its snake_case twin, whichever comes first.
    if (name !== k && Object.prototype.hasOwnProperty.call(value, name)) {
      changed = true;
      continue;
    }
    const child = schema ? schemaChild(name) : (shape as Shape)[name];
    const w = child === undefined ? v : walk(v, child);
    if (name !== k || w !== v) changed = true;
    // A member named `__proto__` (JSON.parse makes it an own one) stays a member, not the prototype.
    if (name === "__proto__") Object.defineProperty(out, name, { value: w, enumerable: true, writable: true, configurable: true });
    else out[name] = w;
  }
  return changed ? out : value;
}

/** The shape of a Gemini Schema's member: sub-schemas walked, the client's values kept. */
function schemaChild(name: string): Shape | SchemaShape | MapOf | "keep" | undefined {
  switch (name) {
    case "properties":
      return { mapOf: SCHEMA };
    case "items":
    case "anyOf":
      return SCHEMA;
    case "enum":
    case "default":
    case "example":
    case "propertyOrdering":
    case "required":
      return KEEP;
    default:
      return undefined;
  }
}
