/**
 * A form generated from a JSON Schema (a workflow's input, a Gate event's payload) with rjsf,
 * validated in the browser by {@link cfworkerValidator} (no eval). Descriptions and titles come
 * from the API: rjsf renders them as text.
 */
import Form from "@rjsf/core";
import type { RJSFSchema } from "@rjsf/utils";
import { useState } from "react";
import { cfworkerValidator } from "../validator.js";

/** Strips keys rjsf would try to resolve remotely or that mean nothing to a form. */
function formSchema(schema: Record<string, unknown>): RJSFSchema {
  const { $schema: _drop, ...rest } = schema;
  return { type: "object", ...rest } as RJSFSchema;
}

export function SchemaForm(props: {
  schema: Record<string, unknown> | null;
  submitLabel: string;
  onSubmit(data: unknown): Promise<void> | void;
  idPrefix: string;
}) {
  const [data, setData] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  return (
    <Form
      schema={formSchema(props.schema ?? {})}
      validator={cfworkerValidator}
      formData={data}
      idPrefix={props.idPrefix}
      showErrorList="top"
      noHtml5Validate
      disabled={busy}
      onChange={(e) => setData(e.formData)}
      onSubmit={async (e) => {
        setBusy(true);
        try {
          await props.onSubmit(e.formData ?? {});
        } finally {
          setBusy(false);
        }
      }}
      uiSchema={{ "ui:submitButtonOptions": { submitText: props.submitLabel } }}
    />
  );
}
