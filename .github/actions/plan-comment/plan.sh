#!/usr/bin/env bash
# The plan step of the plan-comment action: the pull-request comment `spotkube plan --diff --format
# markdown` prints against the base it would merge into (a summary table, then each stack's diff and
# plan, within GitHub's limit), or the whole review when there is no base, into $PLAN_FILE and the job
# summary; every stack's whole plan into $FULL_PLAN_FILE, which the action keeps as an artifact.
# Reads PROJECT, STACKS, STRICT, BASE_SHA, SPOTKUBE, PLAN_FILE and FULL_PLAN_FILE from the environment.
set -u
status=0
args=()
for stack in $STACKS; do args+=(--stack "$stack"); done
strict=()
if [ "$STRICT" = "true" ]; then strict=(--strict); fi
cd "$PROJECT" || exit 2
: > "$PLAN_FILE"
if [ -n "$BASE_SHA" ]; then
  base="$(git merge-base "$BASE_SHA" HEAD)" || exit 2
  # 40: the comment's marker line.
  "$SPOTKUBE" plan "${args[@]}" "${strict[@]}" --diff "$base" --format markdown --max-chars 65496 \
    >> "$PLAN_FILE" || status=$?
else
  "$SPOTKUBE" plan "${args[@]}" "${strict[@]}" --format markdown >> "$PLAN_FILE" || status=$?
fi
"$SPOTKUBE" plan "${args[@]}" --format markdown > "$FULL_PLAN_FILE" || true
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$PLAN_FILE" >> "$GITHUB_STEP_SUMMARY"; fi
cat "$PLAN_FILE"
exit "$status"
