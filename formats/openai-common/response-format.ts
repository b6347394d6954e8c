/**
 * What of another client's structured-output request an OpenAI upstream accepts (Chat
 * `response_format`, Responses `text.format`). Pure.
 */
import type { ResponseFormat, Warnings } from "../hub.ts";

/**
 * `rf` as an OpenAI upstream takes it from a translated request: a `json_schema` format whose schema
 * root is not `type: "object"` (a Gemini client's `responseSchema: {type: "ARRAY", …}`, a bare string
 * or number schema, a root without a type) is dropped with a `dropped_field` warning, since OpenAI's
 * structured outputs take an object root only ("the root level object of a schema must be an object,
 * and not use anyOf", OpenAI Structured Outputs guide, "Supported schemas"; the API answers 400
 * "schema must be a JSON Schema of 'type: \"object\"'"). The request then runs without an output
 * format, as a Gemini `text/x.enum` request does (gemini/parse.ts).
 *
 * Not JSON mode instead: `json_object` makes the model answer with an object, which an array schema
 * does not describe either, and OpenAI answers 400 to JSON mode unless the word "JSON" is in the
 * messages, which a Gemini client giving a schema need not write. Not wrapping the schema in
 * `{type: "object", properties: {items: …}}` and unwrapping the reply either: the unwrapping would have
 * to cut `{"items":` and the closing `}` out of streamed text deltas, in every client format's reply
 * and across chunk boundaries, trusting the model to write exactly that prefix (whitespace and key
 * order are the model's), and the reply's usage and logprobs would still count the wrapper; a
 * non-strict schema does not even bind the model to it. So the reply would not be sound on streams.
 *
 * `apiName` names the upstream's field in the warning. Returns `rf` itself when it is sendable.
 */
export function sendableResponseFormat(rf: ResponseFormat, w: Warnings, apiName: string): ResponseFormat | undefined {
  if (rf.type !== "json_schema" || rf.schema.type === "object") return rf;
  const root = typeof rf.schema.type === "string" ? `a root of type ${rf.schema.type}` : "a root without type object";
  w.add(
    "dropped_field",
    `The JSON schema for the reply has ${root}; OpenAI's structured outputs take an object root only, so ${apiName} was not sent and the reply is not held to the schema.`,
  );
  return undefined;
}
