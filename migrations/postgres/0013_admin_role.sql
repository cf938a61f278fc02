-- A third role, admin: every operation, the admin-only ones too (managing webhook endpoints). Every key keeps
-- its role; the constraint is the one 0003 added to the column, named by PostgreSQL's rule (table_column_check).
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('read', 'write', 'admin'));
