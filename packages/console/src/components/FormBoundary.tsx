/**
 * Keeps a form rjsf cannot draw from taking the page down: rjsf throws while rendering a schema
 * whose `$ref` is missing, remote or circular, and React unmounts the whole app on an error no
 * boundary catches. The schema is API data; its failure is shown as text, the page stays.
 */
import { Component, type ReactNode } from "react";
import { Inline } from "./Text.js";

export class FormBoundary extends Component<{ children: ReactNode }, { error: string | null }> {
  override state = { error: null as string | null };

  static getDerivedStateFromError(error: unknown): { error: string } {
    return { error: error instanceof Error ? error.message : String(error) };
  }

  override render(): ReactNode {
    if (this.state.error === null) return this.props.children;
    return (
      <p className="error form-error" role="alert">
        This form cannot be drawn from its JSON Schema (<Inline text={this.state.error} />
        ): send it with the API or the CLI instead.
      </p>
    );
  }
}
