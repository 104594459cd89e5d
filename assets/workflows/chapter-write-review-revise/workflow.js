// Write → review → revise one chapter file, then ask the author to accept the result.
//
// A writer session drafts (or revises) the chapter; a second writer session reviews it as an
// editor, without editing; the first writer revises from the review. After the last round the
// author approves the chapter or says what should change, which buys one more revision.
// Every file change the writer proposes goes through the approval queue as usual.
({
  title: "Write, review and revise a chapter",
  description:
    "A writer drafts or revises one chapter file, an independent reviewer critiques it against the chapter brief, the lorebook and the prose before it, the writer revises from the review, and the author accepts the result or asks for another pass.",
  whenToUse:
    "When a planned chapter needs a full draft-and-polish pass with an independent review, or an existing draft needs a serious revision. Needs the chapter's file path; the story-tree chapter id lets the writer read its brief.",
  argsHint: [
    { name: "path", label: "Chapter file, project-relative (.md)", defaultValue: null },
    { name: "chapterId", label: "Story-tree chapter id (optional; the writer reads its brief)", defaultValue: null },
    { name: "instructions", label: "What to write or change (optional)", defaultValue: "" },
    { name: "rounds", label: "Review-and-revise rounds (1 to 3)", defaultValue: 1 },
  ],
  phases: [
    { key: "draft", title: "Draft" },
    { key: "review", title: "Review" },
    { key: "revise", title: "Revise" },
    { key: "approve", title: "Author approval" },
  ],

  async run(wf, args) {
    const path = typeof args.path === "string" ? args.path.trim() : "";
    if (!path.endsWith(".md")) {
      throw new Error("args.path must be the chapter's Markdown file, e.g. manuscript/001-volume/003-chapter/index.md");
    }
    const rounds = Math.max(1, Math.min(3, Number.isInteger(args.rounds) ? args.rounds : 1));
    const payload = { path };
    if (args.chapterId !== undefined && args.chapterId !== null && args.chapterId !== "") {
      payload.chapterId = String(args.chapterId);
    }
    const instructions = typeof args.instructions === "string" ? args.instructions.trim() : "";
    const total = 2 + 2 * rounds;
    let done = 0;
    const step = (phase) => wf.progress({ phase, done: done++, total });

    const readChapter = async () => {
      try {
        return await wf.workspace.read(path);
      } catch (e) {
        return null;
      }
    };
    const summaryOf = (r) => {
      const data = r.result && r.result.data;
      if (data && typeof data.summary === "string") return data.summary;
      return (r.result && r.result.message) || "";
    };
    const invoke = async (session, message, what) => {
      const r = await wf.agents.invoke(session, { message, input: payload });
      if (r.status !== "completed") {
        throw new Error(`${what} did not complete (status ${r.status}${r.error ? ": " + r.error : ""})`);
      }
      return r;
    };

    const before = await readChapter();
    const writer = await wf.agents.create("writer", { title: `Writer · ${path}` });
    const reviewer = await wf.agents.create("writer", { title: `Reviewer · ${path}` });

    step("draft");
    wf.log(before === null ? `drafting ${path}` : `revising the existing draft of ${path}`);
    const draftMessage = [
      before === null
        ? `Write the chapter into ${path}.`
        : `Revise the chapter in ${path} (it already has a draft).`,
      payload.chapterId ? `Read the writer brief of chapter ${payload.chapterId} first and follow it.` : "Read the chapter's neighbours and the relevant lorebook entries first.",
      instructions ? `The author's instructions: ${instructions}` : "",
      "Write only that file. End with report_result: a summary of what you wrote and any facts the prose invented.",
    ]
      .filter(Boolean)
      .join("\n");
    const draft = await invoke(writer, draftMessage, "the draft");
    const history = [{ phase: "draft", summary: summaryOf(draft) }];

    let review = null;
    for (let round = 1; round <= rounds; round++) {
      step("review");
      wf.log(`review round ${round} of ${rounds}`);
      review = await invoke(
        reviewer,
        [
          `Review the chapter in ${path} as an editor. Do not edit any file.`,
          payload.chapterId ? `Check it against the writer brief of chapter ${payload.chapterId}.` : "",
          "Check continuity with the chapters before it and the lorebook, point of view and tense, pacing, and whether each scene does its job.",
          "Give numbered, concrete notes, most important first, each with the passage it concerns and what to do. End with report_result whose summary is the full list of notes.",
        ]
          .filter(Boolean)
          .join("\n"),
        `review round ${round}`
      );
      const notes = summaryOf(review);
      history.push({ phase: "review", round, summary: notes });

      step("revise");
      const revised = await invoke(
        writer,
        `Revise ${path} from this review. Apply the notes you agree with; for any you reject, say why in your summary.\n\nReview:\n${notes}`,
        `revision ${round}`
      );
      history.push({ phase: "revise", round, summary: summaryOf(revised) });
    }

    step("approve");
    let decision = null;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const text = await readChapter();
      const excerpt = text === null ? "(the file could not be read; the writer's changes may have been rejected)" : text.slice(0, 1500) + (text.length > 1500 ? "\n…" : "");
      decision = await wf.ask({
        kind: "approve",
        title: `Accept the revised chapter ${path}?`,
        description: `Last revision: ${history[history.length - 1].summary}\n\nOpening:\n${excerpt}`,
      });
      if (decision === null || decision.approved || !decision.note || attempt === 2) break;
      wf.log("the author asked for changes; one more revision");
      const again = await invoke(writer, `The author asks for these changes to ${path}:\n${decision.note}`, "the author's revision");
      history.push({ phase: "revise", round: "author", summary: summaryOf(again) });
    }
    wf.progress({ phase: "approve", done: total, total });
    return {
      path,
      approved: !!(decision && decision.approved),
      authorNote: decision ? decision.note : null,
      rounds,
      history,
      sessions: { writer, reviewer },
    };
  },
})
