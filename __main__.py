"""Entry point of the component provider that `pulumi package add` runs (PulumiPlugin.yaml).

Pulumi's Python language host runs the plugin directory, so this file has to sit at the repository
root; the provider itself lives in `spotkube.components.provider`. `pulumi up` never runs it: Pulumi.yaml points
the program at infra/.
"""

from spotkube.components.provider import main

if __name__ == "__main__":
    main()
