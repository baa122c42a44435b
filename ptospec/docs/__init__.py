"""The reference site: Markdown pages generated from the spec database, built with mkdocs."""
