"""initial ledger

Revision ID: 0001
Revises:
Create Date: 2026-11-22 05:05:54.759812
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import ledger.types

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table('lease',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('owner', sa.String(length=64), nullable=False),
    sa.Column('expires_at', ledger.types.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('name')
    )
    op.create_table('transfer',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('reference', sa.String(length=100), nullable=False),
    sa.Column('provider_reference', sa.String(length=100), nullable=True),
    sa.Column('origin', sa.String(length=16), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('confirmed', sa.Boolean(), nullable=False),
    sa.Column('amount', sa.BigInteger(), nullable=True),
    sa.Column('fee', sa.BigInteger(), nullable=True),
    sa.Column('provider_amount', sa.BigInteger(), nullable=True),
    sa.Column('provider_fee', sa.BigInteger(), nullable=True),
    sa.Column('provider_status', sa.String(length=16), nullable=True),
    sa.Column('webhook_amount', sa.BigInteger(), nullable=True),
    sa.Column('webhook_fee', sa.BigInteger(), nullable=True),
    sa.Column('webhook_status', sa.String(length=16), nullable=True),
    sa.Column('failure_reason', sa.Text(), nullable=True),
    sa.Column('bank_code', sa.String(length=16), nullable=True),
    sa.Column('account_number', sa.String(length=16), nullable=True),
    sa.Column('account_name', sa.String(length=200), nullable=True),
    sa.Column('initiation', sa.String(length=16), nullable=True),
    sa.Column('initiation_error', sa.Text(), nullable=True),
    sa.Column('next_check_at', ledger.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('check_attempts', sa.Integer(), nullable=False),
    sa.Column('not_found_count', sa.Integer(), nullable=False),
    sa.Column('last_checked_at', ledger.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('confirmed_at', ledger.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('lease_owner', sa.String(length=64), nullable=True),
    sa.Column('lease_until', ledger.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('created_at', ledger.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', ledger.types.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('provider_reference'),
    sa.UniqueConstraint('reference')
    )
    with op.batch_alter_table('transfer', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_transfer_created_at'), ['created_at'], unique=False)
        batch_op.create_index('ix_transfer_due', ['next_check_at'], unique=False)
        batch_op.create_index('ix_transfer_status_created', ['status', 'created_at'], unique=False)

    op.create_table('finding',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('transfer_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('detail', sa.Text(), nullable=False),
    sa.Column('opened_at', ledger.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('resolved_at', ledger.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('acknowledged_at', ledger.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('ack_note', sa.Text(), nullable=True),
    sa.Column('updated_at', ledger.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['transfer_id'], ['transfer.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('transfer_id', 'kind', name='uq_finding_transfer_kind')
    )
    with op.batch_alter_table('finding', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_finding_kind'), ['kind'], unique=False)
        batch_op.create_index(batch_op.f('ix_finding_resolved_at'), ['resolved_at'], unique=False)

    op.create_table('webhook_event',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('event', sa.String(length=64), nullable=False),
    sa.Column('reference', sa.String(length=100), nullable=False),
    sa.Column('webhook_id', sa.String(length=200), nullable=True),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('payload', sa.Text(), nullable=False),
    sa.Column('transfer_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('received_at', ledger.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['transfer_id'], ['transfer.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('event', 'reference', name='uq_event_reference'),
    sa.UniqueConstraint('webhook_id')
    )
    with op.batch_alter_table('webhook_event', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_webhook_event_transfer_id'), ['transfer_id'], unique=False)

    op.create_table('alert',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('finding_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('step', sa.Integer(), nullable=False),
    sa.Column('title', sa.Text(), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('created_at', ledger.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('sent_at', ledger.types.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['finding_id'], ['finding.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('key')
    )
    with op.batch_alter_table('alert', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_alert_finding_id'), ['finding_id'], unique=False)

    op.create_table('delivery',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('received_at', ledger.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('remote_addr', sa.String(length=64), nullable=True),
    sa.Column('headers', sa.Text(), nullable=False),
    sa.Column('body', sa.LargeBinary(), nullable=False),
    sa.Column('body_sha256', sa.String(length=64), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('outcome', sa.String(length=16), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('event_type', sa.String(length=64), nullable=True),
    sa.Column('reference', sa.String(length=100), nullable=True),
    sa.Column('webhook_id', sa.String(length=200), nullable=True),
    sa.Column('event_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('transfer_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.ForeignKeyConstraint(['event_id'], ['webhook_event.id'], ),
    sa.ForeignKeyConstraint(['transfer_id'], ['transfer.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('delivery', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_delivery_received_at'), ['received_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_delivery_transfer_id'), ['transfer_id'], unique=False)




def downgrade() -> None:

    with op.batch_alter_table('delivery', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_delivery_transfer_id'))
        batch_op.drop_index(batch_op.f('ix_delivery_received_at'))

    op.drop_table('delivery')
    with op.batch_alter_table('alert', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_alert_finding_id'))

    op.drop_table('alert')
    with op.batch_alter_table('webhook_event', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_webhook_event_transfer_id'))

    op.drop_table('webhook_event')
    with op.batch_alter_table('finding', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_finding_resolved_at'))
        batch_op.drop_index(batch_op.f('ix_finding_kind'))

    op.drop_table('finding')
    with op.batch_alter_table('transfer', schema=None) as batch_op:
        batch_op.drop_index('ix_transfer_status_created')
        batch_op.drop_index('ix_transfer_due')
        batch_op.drop_index(batch_op.f('ix_transfer_created_at'))

    op.drop_table('transfer')
    op.drop_table('lease')

