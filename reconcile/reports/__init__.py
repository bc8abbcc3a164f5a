"""Finance reports: one model aggregated in SQL, rendered as text, JSON, CSV, HTML and xlsx.

Modules: `period` (Lagos days → UTC bounds), `summary` (the SQL aggregation, `build_summary`),
`rows` (one streamed row per transfer), `model` (dataclasses and pure arithmetic), and one
module per format (`text`, `jsonout`, `csvout`, `html`, `xlsx`); `render` ties them together.
"""
