/**
 * A form generated from a JSON Schema (a workflow's input, a Gate event's payload) with rjsf,
 * validated in the browser by {@link cfworkerValidator} (no eval). Descriptions and titles come
 * from the API: rjsf renders them as text, and the few messages it renders as Markdown get
 * their schema words escaped (`textOnlyFormProps`).
 */
// The Form module itself: @rjsf/core's index also pulls its test registry, which imports ajv.
import Form from "@rjsf/core/lib/components/Form.js";
import type { RJSFSchema } from "@rjsf/utils";
import { useState } from "react";
import { textOnlyFormProps } from "../form-text.js";
import { FormBoundary } from "./FormBoundary.js";

/** Strips keys rjsf would try to resolve remotely or that mean nothing to a form. */
function formSchema(schema: Record<string, unknown>): RJSFSchema {
  const { $schema: _drop, ...rest } = schema;
  return { type: "object", ...rest } as RJSFSchema;
}

/** A schema's form, inside a {@link FormBoundary} (a schema rjsf cannot draw is shown as an error). */
export function SchemaForm(props: Parameters<typeof SchemaFormInner>[0]) {
  return (
    <FormBoundary>
      <SchemaFormInner {...props} />
    </FormBoundary>
  );
}

function SchemaFormInner(props: {
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
      {...textOnlyFormProps}
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
