"""ember.fx.experimental: make_fx (registry-op level tracing)."""
