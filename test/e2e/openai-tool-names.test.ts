/**
 * Tool names OpenAI refuses (`^[a-zA-Z0-9_-]{1,64}$`) through the gateway to Chat and Responses
 * providers (formats/tool-names.ts): a Gemini client's MCP tool `docker.io:list_images` (@google/genai)
 * and an Anthropic client's MCP tool name over 64 characters (@anthropic-ai/sdk), to `oai` (kind
 * openai, Chat), `chat` (openai-compatible) and `resp` (openai-responses), streamed and not. The fake
 * upstream answers as OpenAI does: a 400 for a body with a name outside the rule, else a call of the
 * tool under the name the body declared it by. Until 2026-12-07 both names reached these providers as
 * written and the clients got OpenAI's 400.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI, Type, type GenerateContentResponse, type Tool } from "@google/genai";
import { simpleReply, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const DOTTED = "docker.io:list_images";
/** A Claude Code MCP tool name (`mcp__<server>__<tool>`) of 78 characters. */
const LONG = "mcp__claude_ai_company_knowledge_base__search_documents_by_semantic_similarity";
const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Every function name of a Chat or Responses body: declared, called in history, named in tool_choice. */
function bodyNames(req: ReceivedRequest): { declared: string[]; called: string[]; choice: string[] } {
  const b = req.body;
  const chat = req.format === "openai-chat";
  const tc = b.tool_choice;
  return {
    declared: (b.tools ?? []).map((t: any) => (chat ? t.function.name : t.name)),
    called: chat ? b.messages.flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => c.function.name)) : b.input.filter((i: any) => i.type === "function_call").map((i: any) => i.name),
    choice: typeof tc === "object" && tc !== null ? [chat ? tc.function.name : tc.name] : [],
  };
}

/**
 * OpenAI's answer: a 400 naming the first name outside its rule (its wording for tools), else a call of
 * the last declared tool, streamed when asked.
 */
function openAiLike(req: ReceivedRequest): FakeReply {
  const n = bodyNames(req);
  const bad = [...n.declared, ...n.called, ...n.choice].find((name) => !OPENAI_NAME.test(name));
  if (bad !== undefined) {
    return { status: 400, json: { error: { message: `Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'. Got ${JSON.stringify(bad)}.`, type: "invalid_request_error", param: "tools[0].function.name", code: "invalid_value" } } };
  }
  return simpleReply(req.format!, { toolCalls: [{ id: "call_1", name: n.declared.at(-1)!, arguments: { q: "x" } }] }, req.stream);
}

const MODELS = ["oai/gpt-test", "chat/gpt-test", "resp/gpt-test"];

describe("a Gemini client's docker.io:list_images to a Chat or Responses provider", () => {
  const genai = () => new GoogleGenAI({ apiKey: "placeholder", httpOptions: { baseUrl: gw.url } });
  const tools: Tool[] = [{ functionDeclarations: [{ name: "get_weather", parameters: { type: Type.OBJECT, properties: {} } }, { name: DOTTED, parameters: { type: Type.OBJECT, properties: { q: { type: Type.STRING } } } }] }];
  // The turn after a first call: the call and its result in history, the tool named in tool_config.
  const contents = [
    { role: "user", parts: [{ text: "list images" }] },
    { role: "model", parts: [{ functionCall: { id: "c0", name: DOTTED, args: {} } }] },
    { role: "user", parts: [{ functionResponse: { id: "c0", name: DOTTED, response: { images: [] } } }] },
  ];

  for (const model of MODELS) {
    for (const stream of [false, true]) {
      test(`${model} (${stream ? "streamed" : "not streamed"}): the upstream gets docker_io_list_images in tools, history and tool_choice; the client's call is docker.io:list_images`, async () => {
        gw.fake.reset();
        gw.fake.handle(openAiLike);
        const params = { model, contents, config: { tools, toolConfig: { functionCallingConfig: { mode: "ANY" as never, allowedFunctionNames: [DOTTED] } } } };
        const chunks: GenerateContentResponse[] = [];
        if (stream) for await (const c of await genai().models.generateContentStream(params)) chunks.push(c);
        else chunks.push(await genai().models.generateContent(params));
        gw.fake.handle(undefined);
        expect(bodyNames(gw.fake.requests.at(-1)!)).toEqual({ declared: ["get_weather", "docker_io_list_images"], called: ["docker_io_list_images"], choice: ["docker_io_list_images"] });
        expect(chunks.flatMap((c) => c.functionCalls ?? []).map((c) => [c.name, c.args])).toEqual([[DOTTED, { q: "x" }]]);
      });
    }
  }
});

describe("an Anthropic client's 78-character MCP tool name to a Chat or Responses provider", () => {
  const client = () => new Anthropic({ apiKey: "placeholder", baseURL: gw.url, maxRetries: 0 });
  const schema = { type: "object" as const, properties: { q: { type: "string" } } };

  for (const model of MODELS) {
    for (const stream of [false, true]) {
      test(`${model} (${stream ? "streamed" : "not streamed"}): the upstream gets one name of 64 in tools, history and tool_choice; the client's tool_use is named as it declared`, async () => {
        gw.fake.reset();
        gw.fake.handle(openAiLike);
        const params = {
          model,
          max_tokens: 100,
          messages: [
            { role: "user" as const, content: "search" },
            { role: "assistant" as const, content: [{ type: "tool_use" as const, id: "toolu_0", name: LONG, input: { q: "a" } }] },
            { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: "toolu_0", content: "nothing" }] },
          ],
          tools: [
            { name: "get_weather", input_schema: schema },
            { name: LONG, input_schema: schema },
          ],
          tool_choice: { type: "tool" as const, name: LONG },
        };
        const message = stream ? await client().messages.stream(params).finalMessage() : await client().messages.create(params);
        gw.fake.handle(undefined);
        const sent = bodyNames(gw.fake.requests.at(-1)!);
        const name = sent.called[0]!;
        expect(name).toHaveLength(64);
        expect(name).toStartWith("mcp__claude_ai_company_knowledge_base__search_documents_");
        expect(sent).toEqual({ declared: ["get_weather", name], called: [name], choice: [name] });
        expect(message.content.filter((b) => b.type === "tool_use").map((b) => [b.name, b.input])).toEqual([[LONG, { q: "x" }]]);
      });
    }
  }
});
