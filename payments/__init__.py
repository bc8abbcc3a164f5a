"""Money the merchant moves through the provider, initiated by code of its own (payouts)."""
