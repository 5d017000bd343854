/**
 * A run's Repo Slots as branch views (issue 28 §5, ADR-0225), from `GET /runs/:runId/repos`:
 * per slot its branch, base, URL, the commits on the branch (newest first, the rest counted), a
 * diffstat, what was pushed, what the publish hook did and the forge link. Without the Harness
 * (unreachable, too old, the repository swept) it says so and shows the commits the run's log
 * recorded per version. Nothing for a run without Repo Slots, or an Orchestrator without the route.
 *
 * The forge link is the one `href` the console takes from data: the Orchestrator builds it from
 * the operator's template (`JR2_FORGE_URL_TEMPLATE`, checked at start) with every value
 * path-escaped, and it is rendered only when it parses as an `http(s)` URL. Everything else here
 * is text (Text.tsx), the hook's URL included — shown only when the hook succeeded (hook-text.ts).
 */
import { hookView, type RunRepos } from "@jr2/wire";
import { useRepos } from "../queries.js";
import { Inline } from "./Text.js";

type Repo = RunRepos["repos"][number];

const short = (c: string | undefined) => (c ? c.slice(0, 12) : "?");

/** The link when it is an http(s) URL, else null (then it is shown as text). */
function safeHref(link: string): string | null {
  try {
    const u = new URL(link);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch {
    return null;
  }
}

/** What the publish hook did; a failed hook shows FAILED, its exit and first line, and no URL as a result. */
function Hook({ hook }: { hook: NonNullable<Repo["hook"]> }) {
  const view = hookView(hook);
  return (
    <div className={`hook ${view.ok ? "ok" : "failed"}`}>
      <strong>Publish hook:</strong> {view.ok ? null : <strong className="hook-failed">FAILED</strong>}{" "}
      <span className="hook-status">{view.status}</span> in {(hook.ms / 1000).toFixed(1)} s
      {view.ok ? "" : " — the push stands"}
      {view.firstLine ? (
        <>
          :{" "}
          <span className="hook-first-line">
            <Inline text={view.firstLine} />
          </span>
        </>
      ) : null}
      {view.url ? (
        <>
          {" "}
          — printed{" "}
          <span className="hook-url">
            <Inline text={view.url} />
          </span>
        </>
      ) : null}
      {hook.tail.length ? (
        <pre className="text hook-tail">
          <bdi>{hook.tail.join("\n")}</bdi>
        </pre>
      ) : null}
    </div>
  );
}

function Branch({ repo }: { repo: Repo }) {
  const href = repo.link ? safeHref(repo.link) : null;
  const total = (repo.commits?.length ?? 0) + (repo.moreCommits ?? 0);
  return (
    <article className="branch" data-slot={`${repo.workspace}/${repo.slot}`} data-source={repo.source ?? ""}>
      <h3>
        <Inline text={`${repo.workspace}/${repo.slot}`} /> on{" "}
        <code className="branch-name">{repo.branch}</code>
      </h3>
      <dl className="facts">
        <dt>base</dt>
        <dd>
          {repo.baseRef ? <Inline text={`${repo.baseRef} `} /> : null}
          <code>{short(repo.base)}</code>
        </dd>
        {repo.url ? (
          <>
            <dt>url</dt>
            <dd className="url">
              <Inline text={repo.url} />
            </dd>
          </>
        ) : null}
        <dt>pushed</dt>
        <dd className="pushed">
          {repo.pushed ? (
            <>
              <code>{short(repo.pushed.commit)}</code> to <Inline text={repo.pushed.url} />
            </>
          ) : (
            "not yet"
          )}
        </dd>
        {repo.link || repo.noLink ? (
          <>
            <dt>forge</dt>
            <dd className="forge">
              {href ? (
                <a className="forge-link" href={href} target="_blank" rel="noopener noreferrer">
                  {href}
                </a>
              ) : (
                <span className="muted">
                  no link: <Inline text={repo.noLink ?? repo.link ?? ""} />
                </span>
              )}
            </dd>
          </>
        ) : null}
      </dl>
      {repo.hook ? <Hook hook={repo.hook} /> : null}
      {repo.unavailable ? (
        <p className="muted unavailable">
          <Inline text={repo.unavailable} />
        </p>
      ) : null}
      {repo.commits ? (
        <>
          <h4 className="commits-count">
            {total} commit{total === 1 ? "" : "s"}
            {repo.moreCommits ? ` (newest ${repo.commits.length} shown)` : ""}
          </h4>
          <table className="commits">
            <tbody>
              {repo.commits.map((c) => (
                <tr key={c.commit} data-commit={c.commit}>
                  <td>
                    <code>{short(c.commit)}</code>
                  </td>
                  <td>{c.time ? new Date(c.time).toLocaleString() : ""}</td>
                  <td>
                    <Inline text={c.author} />
                  </td>
                  <td>
                    <Inline text={c.subject} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      {repo.stat ? (
        <p className="diffstat">
          {repo.stat.files} file{repo.stat.files === 1 ? "" : "s"} changed,{" "}
          <span className="ins">+{repo.stat.insertions}</span>{" "}
          <span className="del">−{repo.stat.deletions}</span>
        </p>
      ) : null}
      {repo.files?.length ? (
        <ul className="files">
          {repo.files.map((f) => (
            <li key={f.path}>
              <Inline text={f.path} /> <span className="ins">+{f.added}</span>{" "}
              <span className="del">−{f.removed}</span>
            </li>
          ))}
          {repo.moreFiles ? <li className="muted">… {repo.moreFiles} more files</li> : null}
        </ul>
      ) : null}
      {repo.versions ? (
        <table className="versions">
          <tbody>
            {repo.versions.map((v) => (
              <tr key={v.version}>
                <td>v{v.version}</td>
                <td>
                  <code>{short(v.commit)}</code>
                </td>
                <td>
                  <Inline text={v.cause} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </article>
  );
}

/** The run's branch panel; nothing when it has no Repo Slots. */
export function Branches({ runId }: { runId: string }) {
  const repos = useRepos(runId);
  if (repos.error)
    return (
      <section className="branches">
        <h2>Branches</h2>
        <p className="error">
          <Inline text={repos.error.message} />
        </p>
      </section>
    );
  if (!repos.data?.repos.length) return null;
  return (
    <section className="branches">
      <h2>Branches</h2>
      {repos.data.repos.map((r) => (
        <Branch key={`${r.workspace}/${r.slot}`} repo={r} />
      ))}
    </section>
  );
}
