/**
 * docs/tutorial.md as steps a test can run. A fenced block is a step when the line before it is a
 * marker comment, invisible on the rendered page:
 *   <!-- tutorial:file NAME -->   the block is a file the reader saves as NAME
 *   <!-- tutorial:run -->         its commands run one after the other, each to its end
 *   <!-- tutorial:background -->  each of its commands starts a process that keeps running
 * Every step belongs to the `##` section it appears under.
 */

export type TutorialStep =
  | { readonly kind: 'file'; readonly section: string; readonly name: string; readonly text: string }
  | { readonly kind: 'run' | 'background'; readonly section: string; readonly commands: readonly string[] };

const MARKER = /^<!-- tutorial:(file|run|background)(?: (\S+))? -->$/;

/** The steps of a tutorial's markdown, in order; throws on a marker that is not followed by a fenced block. */
export function tutorialSteps(markdown: string): TutorialStep[] {
  const lines = markdown.split('\n');
  const steps: TutorialStep[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('## ')) section = line.slice(3).trim();
    const marker = MARKER.exec(line);
    if (marker === null) continue;
    if (!/^```\w*$/.test(lines[i + 1] ?? '')) throw new Error(`line ${i + 1}: ${line} is not followed by a fenced block`);
    const end = lines.indexOf('```', i + 2);
    if (end === -1) throw new Error(`line ${i + 2}: a fenced block that does not end`);
    const body = lines.slice(i + 2, end);
    const kind = marker[1] as 'file' | 'run' | 'background';
    if (kind === 'file') {
      if (marker[2] === undefined) throw new Error(`line ${i + 1}: a file marker without a name`);
      steps.push({ kind, section, name: marker[2], text: `${body.join('\n')}\n` });
    } else {
      steps.push({ kind, section, commands: joinContinuations(body) });
    }
    i = end;
  }
  return steps;
}

/** Shell lines with their `\` continuations joined, blank lines left out. */
function joinContinuations(lines: readonly string[]): string[] {
  const commands: string[] = [];
  let pending = '';
  for (const line of lines) {
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const command = (pending + line).trim();
    pending = '';
    if (command !== '') commands.push(command);
  }
  return commands;
}

/** A command split as a POSIX shell splits it: its words, and the comment after `#`, if any. */
export interface ShellLine {
  readonly words: readonly string[];
  readonly comment: string;
}

/**
 * Splits one command line into words: single quotes keep text as it is, double quotes expand
 * `$NAME` and `${NAME}`, as does bare text; a `#` that starts a word starts the comment. Enough
 * for the tutorial's commands, and an error for anything it does not cover (`$(...)` inside a
 * word, pipes, `;`), so a tutorial command this cannot read fails the test instead of running
 * as something else.
 */
export function shellWords(line: string, vars: ReadonlyMap<string, string>): ShellLine {
  const words: string[] = [];
  let word: string | null = null;
  const expand = (text: string): string =>
    text.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => {
      const value = vars.get(name);
      if (value === undefined) throw new Error(`$${name} is not set in: ${line}`);
      return value;
    });
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === ' ' || c === '\t') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === '#' && word === null) {
      return { words, comment: line.slice(i + 1).trim() };
    } else if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end === -1) throw new Error(`unclosed ${c} in: ${line}`);
      const quoted = line.slice(i + 1, end);
      word = (word ?? '') + (c === '"' ? expand(quoted) : quoted);
      i = end;
    } else if ('|;&<>`()'.includes(c) || (c === '$' && line[i + 1] === '(')) {
      throw new Error(`the tutorial's commands are plain commands; ${JSON.stringify(c)} is not read in: ${line}`);
    } else {
      const start = i;
      while (i + 1 < line.length && !' \t\'"#|;&<>`()'.includes(line[i + 1] as string)) i++;
      word = (word ?? '') + expand(line.slice(start, i + 1));
    }
  }
  if (word !== null) words.push(word);
  return { words, comment: '' };
}
