//! The schema of a profile store, written once: [`STEPS`] lists the changes
//! from each schema version to the next as data (tables, columns, types,
//! indexes), and [`Dialect::render`] writes one step in SQLite's or
//! PostgreSQL's SQL. Both stores ([`SqliteStore`](crate::SqliteStore), and
//! `PgStore` with the `postgres` feature) run the same steps, so their tables
//! cannot drift apart.
//!
//! | version | step |
//! | --- | --- |
//! | 1 | `versions(id, label UNIQUE, git_rev, date, command, metric)`, `samples(version_id, package, class, method, sends_self, sends_total, activations)`, primary key `(version_id, method)` |
//! | 2 | `versions.total_sends`; the index `samples_by_method(method, version_id)` |
//! | 3 | `stacks(version_id, stack, sends)`, primary key `(version_id, stack)`; `runs(version_id, run, method, self_value, total_value)`, primary key `(version_id, method, run)` |
//!
//! Contract: a step, once released, never changes (stores of that version
//! exist); a new schema is a new step. [`SCHEMA_VERSION`] is the number of
//! steps. The rendered SQL of both dialects is pinned by golden snapshots.

/// The schema version this build writes: the number of [`STEPS`].
pub const SCHEMA_VERSION: i64 = STEPS.len() as i64;

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// The table's own key, allocated by the database on insert.
    Id,
    /// A 64-bit integer.
    Int,
    /// Text.
    Text,
    /// A double-precision float.
    Real,
    /// The id of a row of another table (deleting that row deletes this one).
    References(&'static str),
}

/// One column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub ty: Type,
    /// May it be NULL?
    pub nullable: bool,
    /// Are its values unique in the table?
    pub unique: bool,
}

impl Column {
    /// A NOT NULL column.
    const fn new(name: &'static str, ty: Type) -> Column {
        Column {
            name,
            ty,
            nullable: false,
            unique: false,
        }
    }

    /// A column that may be NULL.
    const fn nullable(name: &'static str, ty: Type) -> Column {
        Column {
            nullable: true,
            ..Column::new(name, ty)
        }
    }

    /// A NOT NULL column whose values are unique.
    const fn unique(name: &'static str, ty: Type) -> Column {
        Column {
            unique: true,
            ..Column::new(name, ty)
        }
    }
}

/// One change of the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A new table; `key` is its primary key when it is made of columns
    /// (a table with a [`Type::Id`] column has that one).
    CreateTable {
        /// Its name.
        name: &'static str,
        /// Its columns, in order.
        columns: &'static [Column],
        /// The columns of its primary key (empty: its `Id` column).
        key: &'static [&'static str],
    },
    /// A new column of an existing table.
    AddColumn {
        /// The table.
        table: &'static str,
        /// The column.
        column: Column,
    },
    /// A new index.
    CreateIndex {
        /// Its name.
        name: &'static str,
        /// The table.
        table: &'static str,
        /// The columns indexed, in order.
        columns: &'static [&'static str],
    },
}

/// The changes of one schema version over the previous one.
pub type Step = &'static [Change];

/// The version a row of `stacks`, `runs` or `samples` belongs to.
const VERSION_ID: Column = Column::new("version_id", Type::References("versions"));

/// The steps from version `i` to `i + 1`, `STEPS[i]`.
pub const STEPS: [Step; 3] = [
    // Version 1: the versions and their per-method metrics.
    &[
        Change::CreateTable {
            name: "versions",
            columns: &[
                Column::new("id", Type::Id),
                Column::unique("label", Type::Text),
                Column::nullable("git_rev", Type::Text),
                Column::new("date", Type::Text),
                Column::new("command", Type::Text),
                Column::new("metric", Type::Text),
            ],
            key: &[],
        },
        Change::CreateTable {
            name: "samples",
            columns: &[
                VERSION_ID,
                Column::new("package", Type::Text),
                Column::new("class", Type::Text),
                Column::new("method", Type::Text),
                Column::new("sends_self", Type::Int),
                Column::new("sends_total", Type::Int),
                Column::new("activations", Type::Int),
            ],
            key: &["version_id", "method"],
        },
    ],
    // Version 2: the run's grand total, and one method's series by index.
    &[
        Change::AddColumn {
            table: "versions",
            column: Column::nullable("total_sends", Type::Int),
        },
        Change::CreateIndex {
            name: "samples_by_method",
            table: "samples",
            columns: &["method", "version_id"],
        },
    ],
    // Version 3: folded stacks and per-run values.
    &[
        Change::CreateTable {
            name: "stacks",
            columns: &[
                VERSION_ID,
                Column::new("stack", Type::Text),
                Column::new("sends", Type::Int),
            ],
            key: &["version_id", "stack"],
        },
        Change::CreateTable {
            name: "runs",
            columns: &[
                VERSION_ID,
                Column::new("run", Type::Int),
                Column::new("method", Type::Text),
                Column::new("self_value", Type::Real),
                Column::new("total_value", Type::Real),
            ],
            key: &["version_id", "method", "run"],
        },
    ],
];

/// The SQL a store speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite: 64-bit `INTEGER`s, `REAL`, rowid keys; tables with a key of
    /// their columns are `WITHOUT ROWID` (clustered on that key).
    Sqlite,
    /// PostgreSQL: `BIGINT`, `DOUBLE PRECISION`, identity keys.
    Postgres,
}

impl Dialect {
    /// The type of a 64-bit integer.
    fn int(self) -> &'static str {
        match self {
            Dialect::Sqlite => "INTEGER",
            Dialect::Postgres => "BIGINT",
        }
    }

    /// The SQL of `column`'s type and constraints.
    fn column(self, c: &Column) -> String {
        let ty = match (c.ty, self) {
            (Type::Id, Dialect::Sqlite) => "INTEGER PRIMARY KEY".to_string(),
            (Type::Id, Dialect::Postgres) => {
                "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY".to_string()
            }
            (Type::Int, _) => self.int().to_string(),
            (Type::Text, _) => "TEXT".to_string(),
            (Type::Real, Dialect::Sqlite) => "REAL".to_string(),
            (Type::Real, Dialect::Postgres) => "DOUBLE PRECISION".to_string(),
            (Type::References(table), _) => format!(
                "{} NOT NULL REFERENCES {table}(id) ON DELETE CASCADE",
                self.int()
            ),
        };
        let mut s = format!("{} {ty}", c.name);
        let implied = matches!(c.ty, Type::Id | Type::References(_));
        if !c.nullable && !implied {
            s.push_str(" NOT NULL");
        }
        if c.unique {
            s.push_str(" UNIQUE");
        }
        s
    }

    /// One change as one SQL statement (with its `;`).
    pub fn change(self, change: &Change) -> String {
        match change {
            Change::CreateTable { name, columns, key } => {
                let mut lines: Vec<String> = columns.iter().map(|c| self.column(c)).collect();
                if !key.is_empty() {
                    lines.push(format!("PRIMARY KEY ({})", key.join(", ")));
                }
                let body: Vec<String> = lines.iter().map(|l| format!("    {l}")).collect();
                let clustered = !key.is_empty() && self == Dialect::Sqlite;
                format!(
                    "CREATE TABLE {name} (\n{}\n){};",
                    body.join(",\n"),
                    if clustered { " WITHOUT ROWID" } else { "" }
                )
            }
            Change::AddColumn { table, column } => {
                format!("ALTER TABLE {table} ADD COLUMN {};", self.column(column))
            }
            Change::CreateIndex {
                name,
                table,
                columns,
            } => format!("CREATE INDEX {name} ON {table}({});", columns.join(", ")),
        }
    }

    /// A step as a batch of SQL statements, one per line.
    pub fn render(self, step: Step) -> String {
        let mut s = String::new();
        for c in step {
            s.push_str(&self.change(c));
            s.push('\n');
        }
        s
    }

    /// The batches that bring a store from version `from` to version `to`
    /// (within `0..=`[`SCHEMA_VERSION`]).
    pub fn steps(self, from: i64, to: i64) -> Vec<String> {
        let at = |v: i64| usize::try_from(v).unwrap_or(0).min(STEPS.len());
        STEPS
            .get(at(from)..at(to))
            .unwrap_or(&[])
            .iter()
            .map(|s| self.render(s))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every step of one dialect, as `-- version N` and its SQL.
    fn all(d: Dialect) -> String {
        let mut s = String::new();
        for (i, step) in STEPS.iter().enumerate() {
            s.push_str(&format!("-- version {}\n{}", i + 1, d.render(step)));
        }
        s
    }

    #[test]
    fn sqlite_schema() {
        insta::assert_snapshot!("sqlite", all(Dialect::Sqlite));
    }

    #[test]
    fn postgres_schema() {
        insta::assert_snapshot!("postgres", all(Dialect::Postgres));
    }

    #[test]
    fn steps_between_versions() {
        assert_eq!(SCHEMA_VERSION, 3);
        assert_eq!(Dialect::Sqlite.steps(0, 3).len(), 3);
        assert_eq!(Dialect::Sqlite.steps(1, 3).len(), 2);
        assert!(Dialect::Postgres.steps(3, 3).is_empty());
        assert!(Dialect::Postgres.steps(2, 9).len() == 1);
    }
}
