/**
 * Found by the request-features tryout (session 45; fixed that session): a document that is not a PDF (a
 * `text/plain` or `text/csv` file a Chat, Responses or Gemini client attaches as base64) reaches
 * Anthropic as `source: {type: "base64", media_type: "text/plain", data}`. Anthropic's base64 document
 * source takes `application/pdf` only; plain text goes as `source: {type: "text", media_type:
 * "text/plain", data: <the text>}` (REFERENCE §5.5 "PDF" row; Anthropic Messages API, document block
 * sources base64 / text / url / file). So the request is sent in a shape Anthropic answers 400, with no
 * warning. Expected: the text arrives (a text source or a text block), or the document is not sent and
 * a warning says so (SPEC F-2). Each test failed for that reason before the fix.
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../../support/translate-body.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
type Block = { type: string; text?: string; source?: { type: string; media_type?: string; data?: string } };

/** The documents of the built Anthropic body whose base64 source is not a PDF, and whether the text reached it at all. */
function check(body: Record<string, unknown>, text: string) {
  const blocks = (body.messages as Array<{ content: Block[] }>).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  const badDocs = blocks.filter((b) => b.type === "document" && b.source?.type === "base64" && b.source.media_type !== "application/pdf");
  const textArrived = blocks.some((b) => (b.type === "text" && b.text?.includes(text)) || (b.type === "document" && b.source?.type === "text" && b.source.data?.includes(text)));
  return { badDocs: badDocs.map((d) => d.source), textArrived };
}

describe("a plain-text file attached as base64 reaches Anthropic in a shape it takes", () => {
  test("Chat `file` with data:text/plain;base64", () => {
    const body = { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "summarise" }, { type: "file", file: { file_data: "data:text/plain;base64," + b64("hello doc"), filename: "a.txt" } }] }] };
    const built = translateBody("openai-chat", body, "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    const r = check(built.body, "hello doc");
    expect(r.badDocs).toEqual([]);
    expect(r.textArrived || built.warnings.length > 0).toBe(true);
  });

  test("Responses `input_file` with data:text/csv;base64", () => {
    const body = { model: "m", input: [{ role: "user", content: [{ type: "input_text", text: "summarise" }, { type: "input_file", file_data: "data:text/csv;base64," + b64("a,b\n1,2"), filename: "a.csv" }] }] };
    const built = translateBody("openai-responses", body, "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    const r = check(built.body, "a,b");
    expect(r.badDocs).toEqual([]);
    expect(r.textArrived || built.warnings.length > 0).toBe(true);
  });

  test("Gemini `inlineData` text/plain", () => {
    const body = { contents: [{ role: "user", parts: [{ text: "summarise" }, { inlineData: { mimeType: "text/plain", data: b64("hello doc") } }] }] };
    const built = translateBody("gemini", body, "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    const r = check(built.body, "hello doc");
    expect(r.badDocs).toEqual([]);
    expect(r.textArrived || built.warnings.length > 0).toBe(true);
  });
});

describe("a document Anthropic cannot take as PDF or text is not sent, and a warning says so", () => {
  const chatWith = (dataUrl: string) => ({ model: "m", messages: [{ role: "user", content: [{ type: "text", text: "read" }, { type: "file", file: { file_data: dataUrl, filename: "f" } }] }] });
  const docs = (body: Record<string, unknown>) =>
    (body.messages as Array<{ content: Block[] }>).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === "document");

  test("application/json is sent as a text source, decoded", () => {
    const built = translateBody("openai-chat", chatWith("data:application/json;base64," + b64('{"a":"é"}')), "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    expect(docs(built.body).map((d) => d.source)).toEqual([{ type: "text", media_type: "text/plain", data: '{"a":"é"}' }]);
    expect(built.warnings.map((w) => w.code)).not.toContain("dropped_media");
  });

  test("text/plain bytes that are not UTF-8 are dropped with dropped_media", () => {
    const built = translateBody("openai-chat", chatWith("data:text/plain;base64," + Buffer.from([0x68, 0xff, 0xfe, 0x69]).toString("base64")), "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    expect(docs(built.body)).toEqual([]);
    expect(built.warnings.find((w) => w.code === "dropped_media")?.message).toContain("not UTF-8");
  });

  test("a Word file is dropped with dropped_media; a PDF still goes as base64", () => {
    const word = translateBody("openai-chat", chatWith("data:application/vnd.openxmlformats-officedocument.wordprocessingml.document;base64," + b64("PK\u0003\u0004")), "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    expect(docs(word.body)).toEqual([]);
    expect(word.warnings.find((w) => w.code === "dropped_media")?.message).toContain("PDF or plain text only");
    const pdf = translateBody("openai-chat", chatWith("data:application/pdf;base64," + b64("%PDF-1.4")), "anthropic-messages", "anthropic", "claude-sonnet-4-5");
    expect(docs(pdf.body).map((d) => d.source)).toEqual([{ type: "base64", media_type: "application/pdf", data: b64("%PDF-1.4") }]);
  });
});
