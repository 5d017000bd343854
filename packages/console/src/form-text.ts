/**
 * rjsf's strings with the schema's words escaped where rjsf renders them as Markdown (issue 12:
 * API data is text — no href or src from data). rjsf interpolates a field's id (from property
 * names) and its reason (`Unknown field type <type>`) into Markdown for an unsupported field,
 * and an error message into Markdown for an invalid object field; every other string it
 * renders as text, so only those have their parameters escaped.
 */
import { englishStringTranslator, TranslatableString } from "@rjsf/utils";
import { cfworkerValidator } from "./validator.js";

/** The messages rjsf passes to its Markdown renderer (markdown-to-jsx). */
const MARKDOWN = new Set<TranslatableString>([
  TranslatableString.UnsupportedField,
  TranslatableString.UnsupportedFieldWithId,
  TranslatableString.UnsupportedFieldWithReason,
  TranslatableString.UnsupportedFieldWithIdAndReason,
  TranslatableString.InvalidObjectField,
]);

/** Backslash-escapes every ASCII punctuation character: Markdown then reads each as itself. */
export const escapeMarkdown = (text: string): string => text.replace(/[!-/:-@[-`{-~]/g, "\\$&");

/** rjsf's `translateString`: English, with the parameters of a Markdown message escaped. */
export function formTranslator(key: TranslatableString, params?: string[]): string {
  return englishStringTranslator(key, MARKDOWN.has(key) ? params?.map(escapeMarkdown) : params);
}

/** The props every console form passes rjsf: the eval-free validator and {@link formTranslator}. */
export const textOnlyFormProps = { validator: cfworkerValidator, translateString: formTranslator } as const;
