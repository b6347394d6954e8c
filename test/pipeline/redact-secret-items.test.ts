/**
 * SPEC R-1: the items of an array under a plural secret-named member (`{"passwords": ["P@ssw0rd123!",
 * "hunter2!abc"]}`) are secrets as the member's own value would be (they went upstream in clear), in
 * Chat's JSON-text arguments and in the structured tool inputs of Anthropic and Gemini alike; not
 * under `tokens` (not secret-named) nor `secrets` (a list of secrets' names), nor in an object inside
 * such an array (its own members decide).
 */
import { expect, test } from "bun:test";
import type { Endpoint, RequestContext } from "../../pipeline/context.ts";
import { redact } from "../../pipeline/redact.ts";
import { restoreText } from "../../pipeline/restore-placeholders.ts";
import { guardedContext } from "../support/context.ts";

function run(endpoint: Endpoint, body: Record<string, unknown>): { ctx: RequestContext; sent: Record<string, unknown> } {
  const ctx = guardedContext(endpoint, body);
  redact(ctx, { enabled: true });
  return { ctx, sent: ctx.rawBody ? JSON.parse(new TextDecoder().decode(ctx.rawBody)) : body };
}

const ARGS = {
  passwords: ["P@ssw0rd123!", "hunter2!abc"],
  api_keys: [["prod", "abc#12345678"]],
  tokens: ["Hello", "world!abc1"],
  secrets: ["db_password", "stripe_api_key"],
  passcodes: [4321],
  accounts: [{ user: "bob", pass_list: "x" }],
  users: ["alice", "bob"],
};
const WANT = {
  passwords: ["[SECRET_1]", "[SECRET_2]"],
  // under a name whose values machines make, a short one is not a secret (as for the member's own value)
  api_keys: [["prod", "[SECRET_3]"]],
  tokens: ["Hello", "world!abc1"],
  secrets: ["db_password", "stripe_api_key"],
  passcodes: ["[SECRET_4]"],
  accounts: [{ user: "bob", pass_list: "x" }],
  users: ["alice", "bob"],
};

test("Chat arguments (JSON text): the items under passwords, api_keys and passcodes are replaced, and come back (a number as a number)", () => {
  const { ctx, sent } = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: JSON.stringify(ARGS) } }] }] });
  const args = JSON.parse((sent as any).messages[0].tool_calls[0].function.arguments);
  expect(args).toEqual(WANT);
  expect(ctx.trace.redactions).toEqual({ secret: 4 });
  expect(restoreText(ctx.restoration!, JSON.stringify(WANT), true)).toBe(JSON.stringify(ARGS));
  // a number item after a string one, and one in an array nested in it; none under a name that is not secret-named
  const more = run("chat", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c2", type: "function", function: { name: "f", arguments: '{"passcodes": ["a", 1234, [-5678], {"n": 9999}], "ids": [12345678]}' } }] }] });
  expect((more.sent as any).messages[0].tool_calls[0].function.arguments).toBe('{"passcodes": ["[SECRET_1]", "[SECRET_2]", ["[SECRET_3]"], {"n": 9999}], "ids": [12345678]}');
});

test("Anthropic tool_use input and Gemini functionCall args: the same items replaced", () => {
  const anthropic = run("messages", { model: "m", max_tokens: 10, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: ARGS }] }] });
  expect((anthropic.sent as any).messages[0].content[0].input).toEqual(WANT);
  expect(restoreText(anthropic.ctx.restoration!, JSON.stringify(WANT), true)).toBe(JSON.stringify(ARGS));
  const gemini = run("gemini", { contents: [{ role: "model", parts: [{ functionCall: { name: "f", args: ARGS } }] }] });
  expect((gemini.sent as any).contents[0].parts[0].functionCall.args).toEqual(WANT);
});
