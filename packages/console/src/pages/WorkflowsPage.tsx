/**
 * Workflows (issue 12): each workflow's Machines (as state charts), Agents and Menus exactly
 * as the model sees them — names, descriptions, parameters — and which states derive which
 * picks. Descriptions are text.
 */
import { Link } from "wouter";
import { seg } from "../api.js";
import { StateChart } from "../components/StateChart.js";
import { Inline, Json, TextBlock } from "../components/Text.js";
import { useChart, useMenu, useWorkflows } from "../queries.js";

function Workflow({ name }: { name: string }) {
  const menu = useMenu(name);
  const chart = useChart(name);
  const none = new Set<string>();
  return (
    <section className="workflow" data-workflow={name}>
      <h2>
        <Inline text={name} />
      </h2>
      {menu.error ? <p className="error">{menu.error.message}</p> : null}
      {menu.data?.machines.map((m) => {
        const drawn = chart.data?.machines.find((c) => c.path === m.path);
        return (
          <div key={m.path} className="machine" data-machine={m.path || "(root)"}>
            <h3>Machine {m.path ? <Inline text={m.path} /> : "(root)"}</h3>
            {drawn ? <StateChart machine={drawn} active={none} /> : null}
            {Object.entries(m.agents).map(([agent, a]) => (
              <div key={agent} className="agent" data-agent={agent}>
                <h4>
                  Agent <Inline text={agent} />
                </h4>
                <table>
                  <thead>
                    <tr>
                      <th>state</th>
                      <th>derives the picks</th>
                    </tr>
                  </thead>
                  <tbody>
                    {Object.entries(a.states).map(([state, picks]) => (
                      <tr key={state}>
                        <td>
                          <Inline text={state} />
                        </td>
                        <td>
                          <Inline text={picks.join(", ") || "none"} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                <h5>Menu (as the model sees it)</h5>
                <ul className="menu">
                  {a.menu.map((tool) => (
                    <li key={tool.name}>
                      <strong>
                        <Inline text={tool.name} />
                      </strong>
                      <TextBlock text={tool.description} />
                      <details>
                        <summary>parameters</summary>
                        <Json value={tool.parameters} />
                      </details>
                    </li>
                  ))}
                </ul>
              </div>
            ))}
          </div>
        );
      })}
    </section>
  );
}

export function WorkflowsPage({ name }: { name?: string }) {
  const workflows = useWorkflows();
  return (
    <main>
      <h1>Workflows</h1>
      <nav className="workflow-list">
        {workflows.data?.map((w) => (
          <Link key={w.name} href={`/workflows/${seg(w.name)}`}>
            {w.name}
          </Link>
        ))}
      </nav>
      {workflows.error ? <p className="error">{workflows.error.message}</p> : null}
      {name ? <Workflow name={name} /> : workflows.data?.map((w) => <Workflow key={w.name} name={w.name} />)}
    </main>
  );
}
