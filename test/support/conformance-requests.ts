/**
 * Hand-written client requests for the upstream conformance test (test/formats/upstream-conformance.test.ts):
 * each exercises a group of features a coding agent or SDK sends (tools and tool results, images,
 * thinking / reasoning, response formats, stop lists, sampling parameters), one request per group so a
 * schema violation in the translated body points at one feature. Bodies follow each client API's own
 * reference (OpenAI Chat Completions and Responses, Anthropic Messages, Gemini generateContent).
 */
import type { WireFormat } from "../../formats/hub.ts";
import { crossings, PDF, PNG, special, WEATHER_PARAMS } from "./conformance-requests-more.ts";

/** One hand-written client request. */
export interface ConformanceRequest {
  id: string;
  clientFormat: WireFormat;
  body: Record<string, unknown>;
}

const ANSWER_SCHEMA = {
  type: "object",
  properties: { answer: { type: "string" }, confidence: { type: "number" }, tags: { type: "array", items: { type: "string" } } },
  required: ["answer", "confidence", "tags"],
  additionalProperties: false,
};

const chat: ConformanceRequest[] = [
  {
    id: "chat-tools",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "18C, cloudy" },
        { role: "user", content: [{ type: "text", text: "And tomorrow?" }] },
      ],
      tools: [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: WEATHER_PARAMS, strict: true } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      max_completion_tokens: 300,
      stream: true,
    },
  },
  {
    id: "chat-tool-choice-required",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [{ role: "user", content: "Use a tool." }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: WEATHER_PARAMS } }],
      tool_choice: "required",
    },
  },
  {
    id: "chat-images",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in these?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}`, detail: "high" } },
            { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
          ],
        },
      ],
      max_tokens: 200,
    },
  },
  {
    id: "chat-json-schema",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [{ role: "developer", content: "Answer in JSON." }, { role: "user", content: "2+2?" }],
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: ANSWER_SCHEMA, strict: true } },
    },
  },
  {
    id: "chat-json-object",
    clientFormat: "openai-chat",
    body: { model: "m", messages: [{ role: "user", content: "Reply in JSON: 2+2?" }], response_format: { type: "json_object" } },
  },
  {
    id: "chat-sampling",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [{ role: "user", content: "Count to ten." }],
      temperature: 0.2,
      top_p: 0.9,
      stop: ["END", "STOP"],
      max_tokens: 100,
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      user: "user-1",
      stream: true,
      stream_options: { include_usage: true },
    },
  },
  {
    id: "chat-stop-string",
    clientFormat: "openai-chat",
    body: { model: "m", messages: [{ role: "user", content: "Say a line." }], stop: "\n\n", temperature: 1 },
  },
  {
    id: "chat-reasoning",
    clientFormat: "openai-chat",
    body: { model: "m", messages: [{ role: "user", content: "Prove it." }], reasoning_effort: "high", max_completion_tokens: 4000 },
  },
  {
    id: "chat-history",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [
        { role: "system", content: [{ type: "text", text: "Be brief." }] },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello." },
        { role: "assistant", content: [{ type: "text", text: "How can I help?" }] },
        { role: "user", content: "Tell a joke.", name: "alice" },
      ],
    },
  },
  {
    id: "chat-file",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [{ role: "user", content: [{ type: "file", file: { filename: "a.pdf", file_data: `data:application/pdf;base64,${PDF}` } }, { type: "text", text: "Summarise." }] }],
    },
  },
  {
    id: "chat-options",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [{ role: "user", content: "Hi" }],
      logprobs: true,
      top_logprobs: 2,
      metadata: { run: "1" },
      store: true,
      service_tier: "auto",
      prompt_cache_key: "k1",
      safety_identifier: "s1",
      verbosity: "low",
      logit_bias: { "50256": -100 },
    },
  },
];

const anthropic: ConformanceRequest[] = [
  {
    id: "anthropic-tools",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 512,
      system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: [{ type: "text", text: "Checking." }, { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "18C" }, { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }] },
            { type: "text", text: "And tomorrow?" },
          ],
        },
      ],
      tools: [{ name: "get_weather", description: "Weather for a city", input_schema: WEATHER_PARAMS }],
      tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
      stream: true,
    },
  },
  {
    id: "anthropic-tool-error",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 256,
      messages: [
        { role: "user", content: "Read a.txt" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_2", name: "read_file", input: { path: "a.txt" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "ENOENT", is_error: true }] },
      ],
      tools: [{ name: "read_file", input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }],
      tool_choice: { type: "any" },
    },
  },
  {
    id: "anthropic-images",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 256,
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
            { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
            { type: "text", text: "Describe both." },
          ],
        },
      ],
    },
  },
  {
    id: "anthropic-thinking",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 8000,
      thinking: { type: "enabled", budget_tokens: 4000 },
      messages: [
        { role: "user", content: "Think, then answer: 17*23?" },
        { role: "assistant", content: [{ type: "thinking", thinking: "17*23 = 391", signature: "sig-abc" }, { type: "text", text: "391" }] },
        { role: "user", content: "And 18*23?" },
      ],
    },
  },
  {
    id: "anthropic-sampling",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 100,
      system: "Be brief.",
      messages: [{ role: "user", content: "Count to ten." }],
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ["END", "STOP"],
      metadata: { user_id: "user-1" },
    },
  },
  {
    id: "anthropic-json",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 200,
      messages: [{ role: "user", content: "2+2? JSON." }],
      output_config: { format: { type: "json_schema", schema: ANSWER_SCHEMA } },
    },
  },
  {
    id: "anthropic-document",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 300,
      messages: [
        {
          role: "user",
          content: [
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF }, title: "a.pdf", citations: { enabled: true } },
            { type: "text", text: "Summarise." },
          ],
        },
      ],
    },
  },
  {
    id: "anthropic-redacted-thinking",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 3000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: [{ type: "redacted_thinking", data: "opaque" }, { type: "text", text: "Hello." }] },
        { role: "user", content: "Bye" },
      ],
      tools: [{ name: "noop", input_schema: { type: "object" } }],
      tool_choice: { type: "none" },
    },
  },
  {
    id: "anthropic-auto-tools",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 300,
      messages: [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral", ttl: "1h" } }] }],
      tools: [{ name: "noop", description: "Does nothing", input_schema: { type: "object", properties: {} }, cache_control: { type: "ephemeral" } }],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      service_tier: "auto",
    },
  },
];

const responses: ConformanceRequest[] = [
  {
    id: "responses-tools",
    clientFormat: "openai-responses",
    body: {
      model: "m",
      instructions: "You are terse.",
      input: [
        { role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }] },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call_output", call_id: "call_1", output: "18C" },
        { role: "user", content: "And tomorrow?" },
      ],
      tools: [{ type: "function", name: "get_weather", description: "Weather for a city", parameters: WEATHER_PARAMS, strict: true }],
      tool_choice: { type: "function", name: "get_weather" },
      parallel_tool_calls: false,
      max_output_tokens: 300,
      stream: true,
    },
  },
  {
    id: "responses-images",
    clientFormat: "openai-responses",
    body: {
      model: "m",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "What is in these?" },
            { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "low" },
            { type: "input_image", image_url: "https://example.com/cat.jpg", detail: "auto" },
          ],
        },
      ],
    },
  },
  {
    id: "responses-reasoning",
    clientFormat: "openai-responses",
    body: {
      model: "m",
      input: "Prove it.",
      reasoning: { effort: "high", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      store: false,
      max_output_tokens: 4000,
    },
  },
  {
    id: "responses-json",
    clientFormat: "openai-responses",
    body: { model: "m", input: "2+2? JSON.", text: { format: { type: "json_schema", name: "answer", schema: ANSWER_SCHEMA, strict: true } } },
  },
  {
    id: "responses-sampling",
    clientFormat: "openai-responses",
    body: { model: "m", input: [{ role: "user", content: "Count to ten." }], temperature: 0.2, top_p: 0.9, max_output_tokens: 100, metadata: { run: "1" } },
  },
  {
    id: "responses-history",
    clientFormat: "openai-responses",
    body: {
      model: "m",
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "Be brief." }] },
        { role: "user", content: "Hi" },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Greeting." }], encrypted_content: "enc" },
        { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello.", annotations: [] }] },
        { role: "assistant", content: "Anything else?" },
        { role: "user", content: "Tell a joke." },
      ],
    },
  },
  {
    id: "responses-file",
    clientFormat: "openai-responses",
    body: {
      model: "m",
      input: [{ role: "user", content: [{ type: "input_file", filename: "a.pdf", file_data: `data:application/pdf;base64,${PDF}` }, { type: "input_text", text: "Summarise." }] }],
    },
  },
  {
    id: "responses-options",
    clientFormat: "openai-responses",
    body: {
      model: "m",
      input: "Hi",
      tools: [{ type: "function", name: "noop", parameters: { type: "object", properties: {} }, strict: false }],
      tool_choice: "required",
      parallel_tool_calls: true,
      text: { verbosity: "low" },
      prompt_cache_key: "k1",
      safety_identifier: "s1",
      truncation: "auto",
      service_tier: "auto",
      top_logprobs: 2,
      user: "user-1",
    },
  },
];

const gemini: ConformanceRequest[] = [
  {
    id: "gemini-tools",
    clientFormat: "gemini",
    body: {
      systemInstruction: { parts: [{ text: "You are terse." }] },
      contents: [
        { role: "user", parts: [{ text: "Weather in Paris?" }] },
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { result: "18C" } } }] },
        { role: "user", parts: [{ text: "And tomorrow?" }] },
      ],
      tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather for a city", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } }, required: ["city"] } }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } },
    },
  },
  {
    id: "gemini-images",
    clientFormat: "gemini",
    body: { contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data: PNG } }, { text: "Describe it." }] }] },
  },
  {
    id: "gemini-thinking",
    clientFormat: "gemini",
    body: { contents: [{ role: "user", parts: [{ text: "Prove it." }] }], generationConfig: { thinkingConfig: { thinkingBudget: 2048, includeThoughts: true }, maxOutputTokens: 4000 } },
  },
  {
    id: "gemini-json",
    clientFormat: "gemini",
    body: {
      contents: [{ role: "user", parts: [{ text: "2+2? JSON." }] }],
      generationConfig: { responseMimeType: "application/json", responseJsonSchema: ANSWER_SCHEMA },
    },
  },
  {
    id: "gemini-sampling",
    clientFormat: "gemini",
    body: {
      contents: [{ role: "user", parts: [{ text: "Count to ten." }] }],
      generationConfig: { temperature: 0.2, topP: 0.9, topK: 40, stopSequences: ["END", "STOP"], maxOutputTokens: 100, seed: 7, presencePenalty: 0.1, frequencyPenalty: 0.2 },
    },
  },
  {
    id: "gemini-history",
    clientFormat: "gemini",
    body: {
      contents: [
        { role: "user", parts: [{ text: "Hi" }] },
        { role: "model", parts: [{ text: "thinking about it", thought: true }, { text: "Hello.", thoughtSignature: "c2ln" }] },
        { role: "user", parts: [{ text: "Tell a joke." }] },
      ],
      safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_ONLY_HIGH" }],
      generationConfig: { candidateCount: 1, responseMimeType: "text/plain" },
    },
  },
  {
    id: "gemini-response-schema",
    clientFormat: "gemini",
    body: {
      contents: [{ role: "user", parts: [{ text: "2+2? JSON." }] }],
      generationConfig: {
        responseMimeType: "application/json",
        responseSchema: { type: "OBJECT", properties: { answer: { type: "STRING" }, confidence: { type: "NUMBER", nullable: true } }, required: ["answer"], propertyOrdering: ["answer", "confidence"] },
      },
      toolConfig: { functionCallingConfig: { mode: "NONE" } },
    },
  },
];

/** Every hand-written request, in a fixed order. */
export const CONFORMANCE_REQUESTS: readonly ConformanceRequest[] = [...chat, ...anthropic, ...responses, ...gemini, ...crossings, ...special];
