/**
 * The real client request captures (test/fixtures/shared/clients) translated to each provider format and
 * read back: nothing the target can express is lost (issue "Formats", round-trip tests). For each
 * capture and each client-capable target format, the capture is parsed by its own codec, built for the
 * target, parsed again by the target's codec, and the conversation's essentials are compared: the
 * system prompt text, every message's visible text in order, every tool call (id, name, arguments) and
 * tool result (call id, text), the function tools (names and parameter property names), the output
 * token limit. Gemini has no client-side parser: its built body is checked directly.
 */
import { describe, expect, test } from "bun:test";
import { anthropicMessages } from "../../formats/anthropic-messages/index.ts";
import { openaiChat } from "../../formats/openai-chat/index.ts";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import { gemini } from "../../formats/gemini/index.ts";
import type { BuildTarget, FormatCodec, ProviderKind } from "../../formats/codec.ts";
import type { HubRequest, WireFormat } from "../../formats/hub.ts";
import { clientRequest } from "../support/fixtures.ts";

const CAPTURES: Array<{ file: string; format: WireFormat }> = [
  { file: "claude-code-default.json", format: "anthropic-messages" },
  { file: "claude-code-tool-use-1.json", format: "anthropic-messages" },
  { file: "claude-code-tool-use-2.json", format: "anthropic-messages" },
  { file: "codex-default.json", format: "openai-responses" },
  { file: "codex-tool-use-1.json", format: "openai-responses" },
  { file: "codex-tool-use-2.json", format: "openai-responses" },
];
const CODECS: Record<string, FormatCodec> = {
  "anthropic-messages": anthropicMessages,
  "openai-chat": openaiChat,
  "openai-responses": openaiResponses,
};
const TARGETS: Array<{ format: WireFormat; kind: ProviderKind; family: BuildTarget["family"] }> = [
  { format: "anthropic-messages", kind: "anthropic-compatible", family: "provider:glm" },
  { format: "openai-chat", kind: "openai-compatible", family: "provider:or" },
  { format: "openai-responses", kind: "openai-responses", family: "openai" },
];

/**
 * The essentials of a conversation a target format can carry. `flat`: for a target without namespaces,
 * where a Codex namespace's function goes by namespace + `__` + name (`multi_agent_v1__spawn_agent`).
 */
function essentials(req: HubRequest, flat = false) {
  const named = (x: { name: string; namespace?: string }) => (flat && x.namespace ? `${x.namespace.replace(/_+$/, "")}__${x.name}` : x.name);
  const text: string[] = [];
  /** System text (top-level and mid-conversation system/developer turns, which some targets hoist). */
  const system: string[] = [];
  const calls: Array<{ id: string; name: string; args: unknown }> = [];
  const results: Array<{ id: string; text: string }> = [];
  for (const t of req.system) if (t.text.trim()) system.push(t.text.trim());
  for (const m of req.messages) {
    const into = m.role === "system" || m.role === "developer" ? system : text;
    for (const p of m.content) {
      if (p.type === "text" && p.text.trim()) into.push(p.text.trim());
      if (p.type === "tool_call") calls.push({ id: p.id, name: named(p), args: p.arguments === "" ? {} : JSON.parse(p.arguments) });
      if (p.type === "tool_result") {
        results.push({
          id: p.callId,
          text: p.content
            .filter((c) => c.type === "text")
            .map((c) => (c as { text: string }).text)
            .join("")
            .trim(),
        });
      }
    }
  }
  const tools = req.tools
    .filter((t) => t.kind === "function")
    .map((t) => ({ name: named(t as { name: string; namespace?: string }), props: Object.keys(((t as { parameters: { properties?: object } }).parameters.properties ?? {}) as object).sort() }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const norm = (xs: string[]) => xs.join("\n\n").replace(/\s+/g, " ");
  return { text: norm(text), system: norm(system.sort()), calls, results, tools, maxOutputTokens: req.maxOutputTokens };
}

describe("client captures → each provider format → back", () => {
  for (const cap of CAPTURES) {
    for (const target of TARGETS) {
      test(`${cap.file} → ${target.format}`, async () => {
        const body = await clientRequest(cap.file);
        const source = CODECS[cap.format];
        const hub = source.parseRequest!(body);
        const built = CODECS[target.format].buildRequest({ ...hub, model: "target-model" }, {
          model: "target-model",
          kind: target.kind,
          family: target.family,
          stream: true,
        });
        const back = CODECS[target.format].parseRequest!(built.body);
        const a = essentials(hub, target.format !== "openai-responses");
        const b = essentials(back);
        // Conversation text in order; system text as a whole (targets may hoist or join system turns).
        expect(b.text).toBe(a.text);
        expect(new Set(b.system.split(" "))).toEqual(new Set(a.system.split(" ")));
        expect(b.calls).toEqual(a.calls);
        expect(b.results).toEqual(a.results);
        // Function tools survive (namespaced Codex tools flattened to namespace__name by non-Responses targets).
        // Claude Code's DeferredToolPlaceholder goes to Anthropic only (tool-kinds.ts withoutDeferPlaceholder).
        const sent = target.format === "anthropic-messages" ? a.tools : a.tools.filter((t) => t.name !== "DeferredToolPlaceholder");
        expect(b.tools.map((t) => t.name)).toEqual(sent.map((t) => t.name));
        for (const t of sent) expect(b.tools.find((x) => x.name === t.name)?.props).toEqual(t.props);
        if (a.maxOutputTokens !== undefined) expect(b.maxOutputTokens).toBe(a.maxOutputTokens);
        // What the target cannot carry is reported, never dropped silently: Codex's built-in web_search
        // tool has no equivalent outside Responses.
        const tool = (body.tools ?? []).find((t: { type?: string }) => t.type === "web_search");
        if (tool && target.format !== "openai-responses") {
          expect(built.warnings.some((w) => w.message.includes("web_search"))).toBe(true);
        }
        for (const w of built.warnings) expect(w.code.length * w.message.length).toBeGreaterThan(0);
      });
    }
    test(`${cap.file} → gemini`, async () => {
      const body = await clientRequest(cap.file);
      const hub = CODECS[cap.format].parseRequest!(body);
      const built = gemini.buildRequest({ ...hub, model: "gemini-x" }, { model: "gemini-x", kind: "gemini", family: "gemini", stream: true });
      const a = essentials(hub, true);
      const g = built.body as any;
      const texts: string[] = [];
      const sys: string[] = [];
      for (const p of g.systemInstruction?.parts ?? []) if (p.text?.trim()) sys.push(p.text.trim());
      const calls: Array<{ name: string; args: unknown }> = [];
      const responses: string[] = [];
      for (const c of g.contents) {
        for (const p of c.parts) {
          if (typeof p.text === "string" && p.text.trim() && !p.thought) texts.push(p.text.trim());
          if (p.functionCall) calls.push({ name: p.functionCall.name, args: p.functionCall.args });
          if (p.functionResponse) responses.push(p.functionResponse.name);
        }
      }
      expect(texts.join("\n\n").replace(/\s+/g, " ")).toBe(a.text);
      expect(new Set(sys.join(" ").replace(/\s+/g, " ").split(" "))).toEqual(new Set(a.system.split(" ")));
      expect(calls).toEqual(a.calls.map((c) => ({ name: c.name, args: c.args })));
      expect(responses).toEqual(a.results.map((r) => a.calls.find((c) => c.id === r.id)!.name));
      const declared = (g.tools ?? []).flatMap((t: any) => t.functionDeclarations ?? []).map((f: any) => f.name).sort();
      expect(declared).toEqual(a.tools.map((t) => t.name).filter((n) => n !== "DeferredToolPlaceholder").sort());
    });
  }
});
