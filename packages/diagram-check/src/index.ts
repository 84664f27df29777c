/**
 * Whether GitHub's Mermaid reads a diagram's labels whole, for tests that
 * render diagrams. Mermaid is an ES module that expects a browser, which a
 * CommonJS test runner cannot load: the check runs in a child process (the
 * package's `diagram-check` command) and its JSON answer comes back here.
 */
export { checkDiagramTexts, checkMarkdownFile } from './child';
export type { DiagramReport } from './check';
