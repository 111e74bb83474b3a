"""Cloud-neutral and pure: the shared spec, validation, the scheduling contract, the plan, cost,
the add-ons as plain objects, and reading stack files. No Pulumi, and no cloud's name."""
