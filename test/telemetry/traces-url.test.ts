/**
 * Where the OTLP exporter sends spans (src/telemetry/otel.ts `tracesUrl`), and what the log line says
 * of it (`shownTracesUrl`): a base endpoint's query stays after the `/v1/traces` it gets.
 */
import { describe, expect, test } from "bun:test";
import { tracesUrl } from "../../src/telemetry/otel.ts";
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
