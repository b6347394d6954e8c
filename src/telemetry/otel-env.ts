/**
 * The environment variables OpenTelemetry export reads (SPEC O-5; OpenTelemetry's standard names, the
 * OTLP exporter and SDK environment specifications), in one place: src/telemetry/otel.ts reads them by
 * these constants, and `switchyard service install` carries the ones set in its shell into service.env
 * (src/cli/service-env.ts), so a variable added here is both read and carried. Imports nothing at load:
 * the SDK (otel.ts) is imported only when an endpoint is set ({@link startTelemetryIfAsked}).
 */
import type { Telemetry } from "./otel.ts";

/** Each variable by its role. */
export const OTEL_ENV = {
  /** Base URL; spans go to `{endpoint}/v1/traces`. */
  endpoint: "OTEL_EXPORTER_OTLP_ENDPOINT",
  /** The traces URL as it is; wins over `endpoint`. */
  tracesEndpoint: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  /** `k=v,k2=v2` headers of every OTLP export. */
  headers: "OTEL_EXPORTER_OTLP_HEADERS",
  /** `k=v` headers of trace exports; win over `headers`. */
  tracesHeaders: "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  /** ms one batch's export may take, retries included. */
  timeout: "OTEL_EXPORTER_OTLP_TIMEOUT",
  /** The same for traces; wins over `timeout`. */
  tracesTimeout: "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
  /** `service.name` (default `switchyard`). */
  serviceName: "OTEL_SERVICE_NAME",
  /** ms between batch exports (default 5000). */
  scheduleDelay: "OTEL_BSP_SCHEDULE_DELAY",
  /** `true` (any case) switches export off, the endpoint set or not (the SDK environment spec). */
  sdkDisabled: "OTEL_SDK_DISABLED",
  /** `k=v,k2=v2` (values percent-encoded) resource attributes of every span, e.g. `deployment.environment=staging`. */
  resourceAttributes: "OTEL_RESOURCE_ATTRIBUTES",
  /** Only `http/json` is exported; another value (`grpc`, `http/protobuf`) is named in a warning. */
  protocol: "OTEL_EXPORTER_OTLP_PROTOCOL",
  /** The same for traces; wins over `protocol`. */
  tracesProtocol: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
} as const;

/** Every variable of {@link OTEL_ENV}, in its order. */
export const OTEL_VARIABLES: ReadonlyArray<(typeof OTEL_ENV)[keyof typeof OTEL_ENV]> = Object.values(OTEL_ENV);

/** Whether `OTEL_SDK_DISABLED` is `true`, in any case (the SDK environment spec: any other value is false). */
export function sdkDisabled(env: Record<string, string | undefined>): boolean {
  return env[OTEL_ENV.sdkDisabled]?.trim().toLowerCase() === "true";
}

/**
 * Starts export (otel.ts `startTelemetry`, imported now) when the environment names an endpoint
 * ({@link OTEL_ENV} `endpoint` or `tracesEndpoint`) and `OTEL_SDK_DISABLED` is not `true` (said in the
 * log); undefined, with none of the SDK loaded, when not.
 */
export async function startTelemetryIfAsked(env: Record<string, string | undefined>, version: string, log: (line: string) => void, instanceId?: string): Promise<Telemetry | undefined> {
  if (!env[OTEL_ENV.endpoint] && !env[OTEL_ENV.tracesEndpoint]) return undefined;
  if (sdkDisabled(env)) {
    log(JSON.stringify({ level: "info", time: Date.now(), msg: `OpenTelemetry export is off: ${OTEL_ENV.sdkDisabled}=true (the endpoint set is not used)` }));
    return undefined;
  }
  return (await import("./otel.ts")).startTelemetry(env, version, log, instanceId);
}
