"""The plan's judges: they read what a program registered and say what it means (pools, placements,
preflight, policy, posture, fallback, cost, the resource list and the diff). Pure: no Pulumi."""
