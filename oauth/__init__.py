"""The OAuth 2.0 provider: users, clients, codes, tokens, login and consent pages."""
