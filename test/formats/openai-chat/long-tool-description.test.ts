/**
 * OpenAI's Chat Completions API refuses a function description over 1024 characters (400
 * `string_above_max_length`, test/support/upstream-rules.ts), and Claude Code's and Gemini CLI's tools
 * have longer ones (Agent 3225, Bash 2110; replace 2063): every request of theirs to a kind `openai`
 * provider failed. Until session 46 such a description was cut to 1024 characters and the rest was
 * lost to the model (Claude Code's Agent tool lists its subagent types at the end). Now the first part
 * stays in the tool, ending in a pointer, and the rest goes after the system (or developer) message's
 * text, one section per cut tool in tool order (formats/openai-chat/long-descriptions.ts), with a
 * `changed_field` warning naming the tool; an openai-compatible server gets the description as it came.
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";
import { ruleViolations } from "../../support/upstream-rules.ts";
import claudeCode from "../../fixtures/shared/clients/claude-code-default.json";

const SCHEMA = { type: "object", properties: {} };
type Tool = { name: string; description: string; input_schema: object };
const ccTools = (claudeCode as unknown as { tools: Tool[] }).tools;
/** Claude Code's Agent tool description as captured (3,225 characters, text replaced keeping its shape). */
const AGENT = ccTools.find((t) => t.name === "Agent")!.description;
const anthropic = (tools: Tool[], system?: string, messages: unknown[] = [{ role: "user", content: "hi" }]) => ({
  model: "m",
  max_tokens: 100,
  ...(system === undefined ? {} : { system }),
  messages,
  tools,
});
const toOpenAI = (body: object, model = "gpt-4.1") => translateBody("anthropic-messages", body as Record<string, unknown>, "openai-chat", "openai", model) as any;
const changed = (warnings: Array<{ code: string; message: string }>) => warnings.filter((w) => w.code === "changed_field").map((w) => w.message);

describe("a function description over 1024 characters to OpenAI's Chat API: the rest goes to the system message", () => {
  test("Claude Code's Agent tool (3,225 characters): the exact tool part and system section", () => {
    expect(AGENT.length).toBe(3225);
    const cut = AGENT.indexOf("\n\nnon proident"); // the last paragraph end that leaves room for the pointer
    expect(cut).toBe(518);
    const { body, warnings } = toOpenAI(anthropic([{ name: "Agent", description: AGENT, input_schema: SCHEMA }], "You are Claude Code."));
    const expected = {
      model: "gpt-4.1",
      messages: [
        { role: "system", content: `You are Claude Code.\n\n## Tool Agent (description continued)\n\n${AGENT.slice(cut + 2)}` },
        { role: "user", content: "hi" },
      ],
      tools: [{ type: "function", function: { name: "Agent", description: `${AGENT.slice(0, cut)} (continued in the system message under "Tool Agent")`, parameters: SCHEMA } }],
      max_completion_tokens: 100,
      stream: false,
    };
    expect(JSON.stringify(body)).toBe(JSON.stringify(expected)); // the bytes, member order included
    expect([...expected.tools[0]!.function.description].length).toBe(571);
    expect(changed(warnings)).toEqual([
      `The description of the tool "Agent" has 3225 characters; OpenAI's Chat Completions API takes at most 1024, so its first 518 stayed in the tool and the rest was moved to the system message, under "Tool Agent".`,
    ]);
    expect(ruleViolations("openai-chat-completions", body, "gpt-4.1")).toEqual([]);
  });

  test("two turns of the same tools and system text: the same tools and system message, byte for byte", () => {
    const tools = [{ name: "Agent", description: AGENT, input_schema: SCHEMA }];
    const turn1 = [{ role: "user", content: "hi" }];
    const turn2 = [
      ...turn1,
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Agent", input: { prompt: "look" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "found" }] },
    ];
    const a = toOpenAI(anthropic(tools, "You are Claude Code.", turn1)).body;
    const b = toOpenAI(anthropic(tools, "You are Claude Code.", turn2)).body;
    expect(a.messages[0].content).toBe(`You are Claude Code.\n\n## Tool Agent (description continued)\n\n${AGENT.slice(520)}`);
    expect(JSON.stringify(b.tools)).toBe(JSON.stringify(a.tools));
    expect(JSON.stringify(b.messages.slice(0, a.messages.length))).toBe(JSON.stringify(a.messages));
    expect(b.messages).toHaveLength(4);
  });

  test("no system message in the request: a system message holding the sections goes first", () => {
    const { body } = toOpenAI(anthropic([{ name: "Agent", description: AGENT, input_schema: SCHEMA }]));
    expect(body.messages).toEqual([
      { role: "system", content: `## Tool Agent (description continued)\n\n${AGENT.slice(520)}` },
      { role: "user", content: "hi" },
    ]);
  });

  test("two cut tools: one section each, in tool order, after the client's system text; a short one stays whole", () => {
    const bash = "Runs a command. " + "Mind the quoting 🙂. ".repeat(120); // > 1024 code points, with astral characters
    const tools = [
      { name: "Bash", description: bash, input_schema: SCHEMA },
      { name: "Read", description: "Reads a file.", input_schema: SCHEMA },
      { name: "Edge", description: "x".repeat(1024), input_schema: SCHEMA },
      { name: "Agent", description: AGENT, input_schema: SCHEMA },
    ];
    const { body, warnings } = toOpenAI(anthropic(tools, "Be brief."));
    const d = body.tools.map((t: any) => t.function.description as string);
    // Bash: cut after its last sentence that leaves room (each sentence is 20 code points, 21 UTF-16 units)
    const pointer = ' (continued in the system message under "Tool Bash")';
    const kept = "Runs a command. " + "Mind the quoting 🙂. ".repeat(47);
    expect(d[0]).toBe(kept.trimEnd() + pointer);
    expect([...d[0]].length).toBe(1007);
    expect(d.slice(1, 3)).toEqual(["Reads a file.", "x".repeat(1024)]);
    expect(d[3]).toBe(`${AGENT.slice(0, 518)} (continued in the system message under "Tool Agent")`);
    expect(body.messages[0]).toEqual({
      role: "system",
      content: `Be brief.\n\n## Tool Bash (description continued)\n\n${"Mind the quoting 🙂. ".repeat(73).trimEnd()}\n\n## Tool Agent (description continued)\n\n${AGENT.slice(520)}`,
    });
    expect(changed(warnings)).toEqual([
      `The description of the tool "Bash" has ${[...bash].length} characters; OpenAI's Chat Completions API takes at most 1024, so its first 955 stayed in the tool and the rest was moved to the system message, under "Tool Bash".`,
      `The description of the tool "Agent" has 3225 characters; OpenAI's Chat Completions API takes at most 1024, so its first 518 stayed in the tool and the rest was moved to the system message, under "Tool Agent".`,
    ]);
  });

  test("no paragraph, line or sentence end to cut at: a word end, or a hard cut, with …", () => {
    const words = "word ".repeat(300); // 1,500 characters
    const solid = "🙂".repeat(1100); // no space at all; astral, so never split in half
    const { body } = toOpenAI(anthropic([
      { name: "Words", description: words, input_schema: SCHEMA },
      { name: "Solid", description: solid, input_schema: SCHEMA },
    ]));
    const [w, s] = body.tools.map((t: any) => t.function.description as string);
    const wPointer = ' (continued in the system message under "Tool Words")';
    const sPointer = ' (continued in the system message under "Tool Solid")';
    expect(w).toBe("word ".repeat(194).trimEnd() + "…" + wPointer);
    expect(s).toBe("🙂".repeat(1024 - [...sPointer].length - 1) + "…" + sPointer);
    expect([...s].length).toBe(1024);
    expect(body.messages[0].content).toBe(
      `## Tool Words (description continued)\n\n${"word ".repeat(106).trimEnd()}\n\n## Tool Solid (description continued)\n\n${"🙂".repeat(1100 - (1024 - [...sPointer].length - 1))}`,
    );
  });

  test("a Chat client's developer message to a reasoning model: the sections go after its text, the pointer says developer", () => {
    const chat = {
      model: "m",
      messages: [
        { role: "developer", content: "Answer in French." },
        { role: "user", content: "hi" },
      ],
      tools: [{ type: "function", function: { name: "Agent", description: AGENT, parameters: SCHEMA } }],
    };
    const { body } = translateBody("openai-chat", chat, "openai-chat", "openai", "o3") as any;
    expect(body.messages[0]).toEqual({ role: "developer", content: `Answer in French.\n\n## Tool Agent (description continued)\n\n${AGENT.slice(520)}` });
    expect(body.tools[0].function.description).toBe(`${AGENT.slice(0, 518)} (continued in the developer message under "Tool Agent")`);
  });

  test("a system message only later in the conversation: a system message goes first, the later one stays", () => {
    const chat = {
      model: "m",
      messages: [
        { role: "user", content: "hi" },
        { role: "system", content: "Now be brief." },
      ],
      tools: [{ type: "function", function: { name: "Agent", description: AGENT, parameters: SCHEMA } }],
    };
    const { body } = translateBody("openai-chat", chat, "openai-chat", "openai", "gpt-4.1") as any;
    expect(body.messages).toEqual([
      { role: "system", content: `## Tool Agent (description continued)\n\n${AGENT.slice(520)}` },
      { role: "user", content: "hi" },
      { role: "system", content: "Now be brief." },
    ]);
  });

  test("Claude Code's captured request to gpt-4.1: every description within 1024, each cut one's rest in the system message, nothing lost", () => {
    const { body } = toOpenAI(claudeCode);
    const compatible = (translateBody("anthropic-messages", claudeCode as Record<string, unknown>, "openai-chat", "openai-compatible", "glm-5") as any).body;
    const sections: string[] = [];
    const sent = new Map<string, string>(body.tools.map((t: any) => [t.function.name, t.function.description]));
    const declared = ccTools.filter((t) => t.name !== "DeferredToolPlaceholder"); // not sent (formats/tool-kinds.ts)
    expect([...sent.keys()]).toEqual(declared.map((t) => t.name));
    for (const t of declared) {
      const d = sent.get(t.name)!;
      expect([...d].length).toBeLessThanOrEqual(1024);
      if ([...t.description].length <= 1024) {
        expect(d).toBe(t.description);
        continue;
      }
      const pointer = ` (continued in the system message under "Tool ${t.name}")`;
      expect(d.endsWith(pointer)).toBe(true);
      const head = d.slice(0, -pointer.length).replace(/…$/, "");
      const section = `## Tool ${t.name} (description continued)\n\n`;
      const start = body.messages[0].content.indexOf(section);
      expect(start).toBeGreaterThan(0);
      const rest = t.description.slice(head.length).trim();
      expect(body.messages[0].content.startsWith(section + rest, start)).toBe(true);
      sections.push(section + rest);
    }
    expect(sections.map((s) => s.split("\n")[0])).toEqual(["Agent", "Bash", "ListAgents", "ScheduleWakeup", "Skill", "Workflow"].map((n) => `## Tool ${n} (description continued)`));
    expect(body.messages[0]).toEqual({ role: "system", content: `${compatible.messages[0].content}\n\n${sections.join("\n\n")}` });
    expect(ruleViolations("openai-chat-completions", body, "gpt-4.1")).toEqual([]);
  });

  test("kind openai-compatible: the description as it came, no section", () => {
    const { body, warnings } = translateBody("anthropic-messages", anthropic([{ name: "Agent", description: AGENT, input_schema: SCHEMA }], "Sys"), "openai-chat", "openai-compatible", "glm-5") as any;
    expect(body.tools[0].function.description).toBe(AGENT);
    expect(body.messages[0]).toEqual({ role: "system", content: "Sys" });
    expect(changed(warnings)).toEqual([]);
  });
});
