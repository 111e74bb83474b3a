#!/usr/bin/env bash
# The plan step of the plan-comment action: what the pull request changes against the base it would
# merge into (when there is one), then the whole review, into $PLAN_FILE and the job summary.
# Reads PROJECT, STACKS, STRICT, BASE_SHA, SPOTKUBE and PLAN_FILE from the environment.
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
  "$SPOTKUBE" plan "${args[@]}" --diff "$base" --format markdown >> "$PLAN_FILE" || status=$?
fi
"$SPOTKUBE" plan "${args[@]}" "${strict[@]}" --format markdown >> "$PLAN_FILE" || status=$?
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat "$PLAN_FILE" >> "$GITHUB_STEP_SUMMARY"; fi
cat "$PLAN_FILE"
exit "$status"
