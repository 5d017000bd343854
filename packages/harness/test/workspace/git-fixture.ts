// The git fixture is shared with the conformance tier and the crash harness's `worktree` phase
// (duplicates D8): one copy, in @jr2/conformance.
export type { GitFixture } from "../../../conformance/src/git-fixture.js";
export { makeGitFixture, userGit } from "../../../conformance/src/git-fixture.js";
