"""The operators' surface: the JSON API under `/api`, the reports page, the admin token."""
