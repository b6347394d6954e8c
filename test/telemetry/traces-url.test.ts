/**
 * Where the OTLP exporter sends spans (src/telemetry/otel.ts `tracesUrl`), and what the log line says
 * of it (`shownTracesUrl`): a base endpoint's query stays after the `/v1/traces` it gets.
 */
import { describe, expect, test } from "bun:test";
import { startTelemetry, tracesUrl } from "../../src/telemetry/otel.ts";
import { shownTracesUrl } from "../../src/show-url.ts";

describe("tracesUrl", () => {
  test("a base endpoint gets /v1/traces on its path; a trailing slash is not doubled", () => {
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe("http://127.0.0.1:4318/v1/traces");
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/collector/" })).toBe("http://127.0.0.1:4318/collector/v1/traces");
  });

  test("a base endpoint's query stays after the path (it went before /v1/traces: spans reached /collector)", () => {
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/collector?token=abc" })).toBe("http://127.0.0.1:4318/collector/v1/traces?token=abc");
  });

  test("the traces endpoint is used as it is; none set is off", () => {
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b/x?y=1" })).toBe("http://b/x?y=1");
    expect(tracesUrl({})).toBeUndefined();
  });

  test("a base that is no http(s) URL keeps the text form, and the log line refuses it", () => {
    const url = tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" })!;
    expect(url).toBe("localhost:4318/v1/traces");
    expect(shownTracesUrl(url)).toBeUndefined();
  });
});

describe("shownTracesUrl", () => {
  test("the log line shows the path spans go to, not the query, and says one was left out", () => {
    expect(shownTracesUrl("http://127.0.0.1:4318/collector/v1/traces?token=abc")).toBe("http://127.0.0.1:4318/collector/v1/traces (query not shown)");
    expect(shownTracesUrl("http://user:pw@127.0.0.1:4318/v1/traces")).toBe("http://127.0.0.1:4318/v1/traces");
  });
});

describe("an endpoint that is no http(s) URL, quoted in the warning", () => {
  /** The warning's quote of `endpoint` (export off). */
  const quoted = (endpoint: string) => {
    const lines: string[] = [];
    expect(startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, "test", (l) => lines.push(l))).toBeUndefined();
    expect(lines).toHaveLength(1);
    return (JSON.parse(lines[0]!) as { msg: string }).msg.replace(/^.*, not /, "");
  };

  test("without its user and password whatever the password holds (#, / or ? went into the log in clear), and without a query", () => {
    expect(quoted("grpc://alice:s3cretPw9@collector:4317")).toBe('"grpc://…@collector:4317"');
    expect(quoted("http://alice:p#ss9word@collector:4318")).toBe('"http://…@collector:4318"');
    expect(quoted("https://bob:pa/ss9word@collector:4318")).toBe('"https://…@collector:4318"');
    expect(quoted("grpc://alice:p?ss9word@collector:4317")).toBe('"grpc://…@collector:4317"');
    expect(quoted("alice:s3cretPw9@collector:4318")).toBe('"…@collector:4318"');
    expect(quoted("grpc://collector:4317?token=abc123")).toBe('"grpc://collector:4317 (query not shown)"');
    expect(quoted("localhost:4318")).toBe('"localhost:4318"');
  });
});
