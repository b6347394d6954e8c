/**
 * One list of the OpenTelemetry variables (src/telemetry/otel-env.ts): the exporter reads them by its
 * constants and `switchyard service install` carries the set ones into service.env, so no variable can
 * be read without being carried (src/cli/service-env.ts had its own copy of the names).
 */
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { join } from "node:path";
import { shellTelemetry } from "../../src/cli/service-env.ts";
import { OTEL_ENV, OTEL_VARIABLES } from "../../src/telemetry/otel-env.ts";

const SRC = join(import.meta.dir, "../../src");

test("no source file but otel-env.ts names an OTEL_ variable in its code (comments aside)", async () => {
  const named: string[] = [];
  for await (const file of new Glob("**/*.{ts,tsx}").scan(SRC)) {
    if (file === "telemetry/otel-env.ts") continue;
    const lines = (await Bun.file(join(SRC, file)).text()).split("\n");
    lines.forEach((line, i) => {
      const code = line.trim();
      if (code.startsWith("*") || code.startsWith("//") || code.startsWith("/*")) return;
      // a variable's name (OTEL_EXPORTER_…, OTEL_SERVICE_NAME), not the list's own (OTEL_ENV, OTEL_VARIABLES)
      const m = /OTEL_(?!ENV\b|VARIABLES\b)[A-Z_]{3,}/.exec(code.replace(/\/\/.*$/, ""));
      if (m) named.push(`${file}:${i + 1} ${m[0]}`);
    });
  }
  expect(named).toEqual([]);
});

test("service install carries every variable the exporter reads, and only those", () => {
  const env: Record<string, string> = { OTEL_UNRELATED: "x", PATH: "/bin" };
  for (const name of Object.values(OTEL_ENV)) env[name] = "set";
  expect(shellTelemetry(env)).toEqual([...OTEL_VARIABLES]);
  expect(OTEL_VARIABLES).toContain("OTEL_EXPORTER_OTLP_ENDPOINT");
  expect(new Set(OTEL_VARIABLES).size).toBe(12);
});
