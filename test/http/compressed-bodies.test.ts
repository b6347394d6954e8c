/**
 * Request bodies sent with `Content-Encoding` through a real gateway (SPEC G-4): gzip, deflate (zlib and
 * raw), br and zstd (what Codex sends when logged in with ChatGPT against the built-in OpenAI provider:
 * src/http/request-encoding.ts) are decoded and served, the upstream getting the plain JSON without the
 * client's coding; the body limit holds for the DECOMPRESSED size (a small body that inflates past it is
 * a 413, a zip bomb is refused without being inflated whole); bytes that are not the named coding are a
 * 400 and an unknown coding (or a stack of more than 3 codings) a 415, each in the client's own error format.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync, zstdCompressSync } from "node:zlib";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { decodeRequestBody } from "../../src/http/request-encoding.ts";

const LIMIT = 64 * 1024;
const YAML = `
server:
  max_body_bytes: ${LIMIT}
${fakeProviders([["anth", "anthropic"], ["oai", "openai"], ["resp", "openai-responses"]])}`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

/** [Content-Encoding, how the body is compressed, label]. */
const CODINGS: Array<[string, (b: Uint8Array) => Uint8Array, string]> = [
  ["gzip", (b) => gzipSync(b), "gzip"],
  ["x-gzip", (b) => gzipSync(b), "gzip"],
  ["deflate", (b) => deflateSync(b), "zlib"],
  ["deflate", (b) => deflateRawSync(b), "raw deflate, as Bun.deflateSync writes it"],
  ["br", (b) => brotliCompressSync(b), "brotli"],
  ["zstd", (b) => zstdCompressSync(b), "zstd, as Codex sends it"],
  ["gzip, br", (b) => brotliCompressSync(gzipSync(b)), "gzip then brotli, in the order listed"],
];

const ENDPOINTS = [
  { path: "/v1/chat/completions", shape: "openai", body: (text: string) => ({ model: "oai/gpt-test", messages: [{ role: "user", content: text }] }) },
  { path: "/v1/responses", shape: "openai", body: (text: string) => ({ model: "resp/gpt-test", input: text }) },
  { path: "/v1/messages", shape: "anthropic", body: (text: string) => ({ model: "anth/claude-test", max_tokens: 20, messages: [{ role: "user", content: text }] }) },
] as const;

const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const send = (path: string, body: Uint8Array, encoding: string) =>
  fetch(`${gw.url}${path}`, { method: "POST", body, headers: { "content-type": "application/json", "content-encoding": encoding } });

/** The error body in the client's shape (OpenAI `{error:{message,type,code}}` or Anthropic `{type:"error",error:{type,message}}`). */
async function errorOf(res: Response, shape: "openai" | "anthropic"): Promise<{ message: string; type: string; code?: string }> {
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as any;
  if (shape === "anthropic") {
    expect(body.type).toBe("error");
    expect(Object.keys(body.error).sort()).toEqual(["message", "type"]);
  } else {
    expect(Object.keys(body)).toEqual(["error"]);
  }
  return body.error;
}

describe("accepted codings are decoded and served", () => {
  for (const { path, body } of ENDPOINTS) {
    for (const [encoding, compress, label] of CODINGS) {
      test(`${path}, Content-Encoding: ${encoding} (${label})`, async () => {
        const text = `compressed hello via ${encoding}`;
        const before = gw.fake.requests.length;
        const res = await send(path, compress(json(body(text))), encoding);
        expect([res.status, (await res.text()).slice(0, 200)]).toEqual([200, expect.any(String)]);
        expect(gw.fake.requests.length).toBe(before + 1);
        const up = gw.fake.requests.at(-1)!;
        expect(up.raw).toContain(text);
        expect(up.headers["content-encoding"]).toBeUndefined();
      });
    }
  }
});

describe("the body limit is on the decompressed size", () => {
  for (const { path, shape, body } of ENDPOINTS) {
    test(`${path}: a body that inflates past max_body_bytes is a 413 in the client's format, nothing sent upstream`, async () => {
      const big = json(body("a".repeat(LIMIT * 2)));
      for (const [encoding, compress] of CODINGS) {
        const wire = compress(big);
        expect(wire.byteLength).toBeLessThan(LIMIT);
        const before = gw.fake.requests.length;
        const res = await send(path, wire, encoding);
        expect(res.status).toBe(413);
        const err = await errorOf(res, shape);
        expect(err.message).toContain(`limit of ${LIMIT} bytes once decompressed`);
        expect(gw.fake.requests.length).toBe(before);
      }
    });
  }

  test("a zip bomb (16 MiB of zeros as ~16 KiB of gzip or ~1 KiB of zstd) is refused with 413 at once, and the gateway keeps serving", async () => {
    const zeros = new Uint8Array(16 * 1024 * 1024);
    for (const [encoding, wire] of [["gzip", gzipSync(zeros, { level: 9 })], ["zstd", zstdCompressSync(zeros)]] as const) {
      expect(wire.byteLength).toBeLessThan(LIMIT);
      const started = performance.now();
      const res = await send("/v1/chat/completions", wire, encoding);
      expect(res.status).toBe(413);
      expect((await errorOf(res, "openai")).code).toBe("request_too_large");
      expect(performance.now() - started).toBeLessThan(2_000);
    }
    const ok = await send("/v1/chat/completions", gzipSync(json(ENDPOINTS[0].body("after the bomb"))), "gzip");
    expect(ok.status).toBe(200);
  });
});

describe("bodies that cannot be decoded", () => {
  for (const { path, shape, body } of ENDPOINTS) {
    test(`${path}: bytes that are not the named coding are a 400 naming it; an unknown coding a 415`, async () => {
      const plain = json(body("hi"));
      for (const [encoding, wire] of [
        ["gzip", new TextEncoder().encode("\x1f\x8b not really gzip")],
        ["zstd", gzipSync(plain)],
        ["br", new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x00, 0x01])],
      ] as const) {
        const before = gw.fake.requests.length;
        const res = await send(path, wire, encoding);
        expect(res.status).toBe(400);
        const err = await errorOf(res, shape);
        expect(err.message).toContain(`not valid ${encoding} data`);
        expect(gw.fake.requests.length).toBe(before);
      }
      // A stack of more than 3 codings is refused before any decoding: each stage may inflate up to the
      // limit, so a header listing gzip hundreds of times over nested stored layers was minutes of CPU.
      for (const n of [4, 1000]) {
        let wire: Uint8Array = plain;
        for (let i = 0; i < Math.min(n, 8); i++) wire = gzipSync(wire);
        const before = gw.fake.requests.length;
        const res = await send(path, wire, Array(n).fill("gzip").join(","));
        expect(res.status).toBe(415);
        const err = await errorOf(res, shape);
        expect(err.message).toContain("lists more content codings than this gateway undoes (Content-Encoding: gzip, gzip, gzip, gzip");
        if (shape === "openai") expect(err.code).toBe("unsupported_content_encoding");
        expect(gw.fake.requests.length).toBe(before);
      }
      // Three (identity not counted) are still undone, last to first.
      const three = await send(path, brotliCompressSync(gzipSync(gzipSync(plain))), "gzip, identity, gzip, br");
      expect([three.status, (await three.text()).slice(0, 200)]).toEqual([200, expect.any(String)]);
      for (const encoding of ["compress", "gzip, lz4"]) {
        const res = await send(path, gzipSync(plain), encoding);
        expect(res.status).toBe(415);
        const err = await errorOf(res, shape);
        expect(err.message).toContain("gzip, deflate, br and zstd");
      }
    });
  }
});

test("a body limit past the largest buffer (server.max_body_bytes: 5000000000) still decodes a small gzip body, not a 413", async () => {
  const plain = json({ model: "oai/gpt-test" });
  for (const limit of [2 ** 32, 5_000_000_000, 1e12]) {
    const out = await decodeRequestBody(gzipSync(plain), "gzip", limit);
    expect([limit, out instanceof Uint8Array ? new TextDecoder().decode(out) : out]).toEqual([limit, JSON.stringify({ model: "oai/gpt-test" })]);
  }
});
