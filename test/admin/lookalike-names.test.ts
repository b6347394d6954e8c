/**
 * Combo and alias names a person cannot tell apart (src/config/lookalike-names.ts). A client's model
 * name is matched exactly (case-sensitive, code point by code point: pipeline/resolve.ts), so such
 * names would both route while reading as one. The admin API refuses a new combo or alias whose name
 * differs from an existing one (the file's or a stored one, combo or alias) only in case, or is the
 * same text after Unicode NFC normalization: 409 naming the existing one. The config file's own such
 * names load with a warning (an existing file keeps working).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";
import { ok, yaml } from "../config/helpers.ts";

const YAML = `
${providersAtFake(["p", "anthropic"])}
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
combos:
  - name: demo
    targets:
      - model: p/claude-demo
aliases:
  fast: p/claude-fast
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_A1: "sk-test-account-one" } });
});
afterAll(async () => {
  await gw?.stop();
});

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${gw.url}/admin/api${path}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
const combo = (name: string) => api("POST", "/combos", { name, targets: [{ model: "p/claude-x" }] });
const alias = (name: string) => api("POST", "/aliases", { name, target: "p/claude-y" });
const names = async () => {
  const combos = ((await (await api("GET", "/combos")).json()) as any).combos.map((c: any) => c.name);
  const aliases = ((await (await api("GET", "/aliases")).json()) as any).aliases.map((a: any) => a.name);
  return { combos, aliases };
};
const CASE = "(model names are matched exactly: both would route, but they read as one name)";
const NFC = "(the same text after Unicode NFC normalization, written with other code points)";

describe("the admin API refuses a combo or alias name that reads as an existing one", () => {
  test("a combo differing only in case from the file's combo: 409 naming it and the file", async () => {
    const r = await combo("DEMO");
    expect(r.status).toBe(409);
    expect(await r.json()).toEqual({
      error: { message: `The name "DEMO" differs only in case from the combo "demo" of the config file ${gw.configPath} ${CASE}: choose another name.`, type: "conflict_error", param: "name", code: "conflict" },
    });
  });

  test("combos and aliases differing only in case from the file's alias, and from each other across kinds: 409", async () => {
    for (const make of [combo, alias]) {
      for (const name of ["Fast", "FAST"]) {
        const r = await make(name);
        expect(r.status).toBe(409);
        const body = (await r.json()) as any;
        expect(body.error.message).toBe(`The name "${name}" differs only in case from the alias "fast" of the config file ${gw.configPath} ${CASE}: choose another name.`);
      }
    }
    expect((await alias("Demo")).status).toBe(409);
    expect(await names()).toEqual({ combos: ["demo"], aliases: ["fast"] });
  });

  test("a stored combo's look-alikes: other case, and NFC-equal (precomposed é vs e + U+0301)", async () => {
    expect((await combo("caf\u00e9")).status).toBe(201);
    const decomposed = await alias("cafe\u0301");
    expect(decomposed.status).toBe(409);
    expect(((await decomposed.json()) as any).error.message).toBe(`The name "cafe\u0301" looks identical to the combo "caf\u00e9" ${NFC}: choose another name.`);
    const upper = await combo("CAF\u00c9");
    expect(upper.status).toBe(409);
    expect(((await upper.json()) as any).error.message).toBe(`The name "CAF\u00c9" differs only in case from the combo "caf\u00e9" ${CASE}: choose another name.`);
    // Upper case and decomposed at once: the same after NFC and lower-casing.
    expect((await combo("CAFE\u0301")).status).toBe(409);
    expect(await names()).toEqual({ combos: ["demo", "caf\u00e9"], aliases: ["fast"] });
  });

  test("the exact name keeps its own answers, and a distinct name is still created", async () => {
    const same = await combo("demo");
    expect(same.status).toBe(409);
    expect(((await same.json()) as any).error.message).toBe(`The name "demo" is taken by the config file ${gw.configPath}.`);
    expect((await combo("demo2")).status).toBe(201);
    expect((await alias("faster")).status).toBe(201);
  });
});

describe("the config file's look-alike names load with a warning", () => {
  test("combos and aliases differing in case or equal after NFC: a warning each, every name still loads", () => {
    const cfg = ok(yaml`
      combos:
        - { name: demo, targets: [{ model: openai/x }] }
        - { name: DEMO, targets: [{ model: openai/y }] }
        - { name: "caf\u00e9", targets: [{ model: openai/z }] }
      aliases:
        fast: openai/a
        Fast: openai/b
        "cafe\u0301": openai/c
    `);
    expect(cfg.warnings).toEqual([
      { path: "combos[1].name", message: `combo name "DEMO" differs only in case from the combo "demo" ${CASE}; rename one` },
      { path: "aliases.Fast", message: `alias name "Fast" differs only in case from the alias "fast" ${CASE}; rename one` },
      { path: 'aliases["cafe\u0301"]', message: `alias name "cafe\u0301" looks identical to the combo "caf\u00e9" ${NFC}; rename one` },
    ]);
    expect([...cfg.combos.keys()]).toEqual(["demo", "DEMO", "caf\u00e9"]);
    expect([...cfg.aliases.keys()]).toEqual(["fast", "Fast", "cafe\u0301"]);
  });
});
