//! The table of every mapvis command: name, aliases, arguments and help.
//!
//! This table is the single source of truth for `help`, argument checking and
//! tab completion, so they all work even for commands whose implementation
//! is not registered yet. Usage lines are derived from the argument lists.

/// The `help` section a command is listed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Choosing the program and settings.
    Setup,
    /// Tracing and analysis steps.
    Pipeline,
    /// Drawing figures.
    Figures,
    /// Shell housekeeping.
    Housekeeping,
    /// Running the program under a stock Valgrind tool.
    ValgrindTools,
    /// The cache model, reuse distance and sharing.
    Locality,
    /// Runs kept side by side and compared.
    Runs,
    /// The allocation side: the heap profiler and its reports.
    Heap,
    /// Traces written in other tools' formats.
    Exports,
}

impl Group {
    /// All groups, in the order `help` lists them.
    pub const ALL: [Group; 9] = [
        Group::Setup,
        Group::Pipeline,
        Group::Figures,
        Group::Locality,
        Group::Runs,
        Group::Heap,
        Group::Exports,
        Group::Housekeeping,
        Group::ValgrindTools,
    ];

    /// The heading `help` prints for this group.
    pub fn title(self) -> &'static str {
        match self {
            Group::Setup => "Setup",
            Group::Pipeline => "Pipeline",
            Group::Figures => "Figures",
            Group::Housekeeping => "Housekeeping",
            Group::ValgrindTools => "Valgrind tools",
            Group::Locality => "Caches and locality",
            Group::Runs => "Comparing runs",
            Group::Heap => "Heap",
            Group::Exports => "Exports",
        }
    }

    /// The word `help WORD` takes for this group: the title's first word,
    /// in lower case (`figures`, `caches`, `comparing`), none of them a
    /// command's name.
    pub fn word(self) -> String {
        let title = self.title();
        title
            .split(' ')
            .next()
            .unwrap_or(title)
            .to_ascii_lowercase()
    }

    /// The group `help` names by `word` (see [`Group::word`]).
    pub fn named(word: &str) -> Option<Group> {
        Group::ALL.into_iter().find(|g| g.word() == word)
    }
}

/// The first sentence of `text` (see [`CommandSpec::summary`]).
fn first_sentence(text: &'static str) -> &'static str {
    const ABBREVIATIONS: [&str; 4] = ["e.g", "i.e", "etc", "vs"];
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '.' if depth <= 0 && text[i + 1..].starts_with(' ') => {
                let word = text[..i].rsplit([' ', '(']).next().unwrap_or("");
                if !ABBREVIATIONS.contains(&word) {
                    return &text[..=i];
                }
            }
            _ => {}
        }
    }
    text
}

/// What an argument is, for checking and for tab completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// A command name (completed from the known commands).
    Command,
    /// A file or folder path (completed from the file system).
    Path,
    /// The name of an array or variable of the traced program (completed from
    /// the state's name source, see [`super::Registry::set_name_source`]).
    Name,
    /// The label of a saved run (completed from the working folder's runs,
    /// see [`super::Registry::set_run_source`]).
    Run,
    /// Exactly one of these words (checked and completed).
    OneOf(&'static [&'static str]),
    /// A non-negative integer (checked).
    Int,
    /// Free text.
    Text,
}

/// One argument of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arg {
    /// The placeholder shown in the usage line (`NAME`, `H|S|G|all`).
    pub name: &'static str,
    /// What the argument is.
    pub kind: ArgKind,
    /// Whether it may be left out (shown as `?NAME?`).
    pub optional: bool,
    /// Whether it may repeat (last argument only; shown as `?NAME ...?`).
    pub repeat: bool,
    /// Whether it is given exactly when the optional argument before it is
    /// (see [`opt_with`]).
    pub with_previous: bool,
}

/// A required argument.
pub const fn req(name: &'static str, kind: ArgKind) -> Arg {
    Arg {
        name,
        kind,
        optional: false,
        repeat: false,
        with_previous: false,
    }
}

/// An optional argument.
pub const fn opt(name: &'static str, kind: ArgKind) -> Arg {
    Arg {
        name,
        kind,
        optional: true,
        repeat: false,
        with_previous: false,
    }
}

/// An optional argument that goes with the optional argument before it:
/// both are given or neither (`NAME ?COLS TYPEBYTES? ?save?`). The shell
/// refuses a partial group with the usual `wrong # args` message, so the
/// handler sees the whole group or none of it.
pub const fn opt_with(name: &'static str, kind: ArgKind) -> Arg {
    Arg {
        name,
        kind,
        optional: true,
        repeat: false,
        with_previous: true,
    }
}

/// Zero or more trailing arguments.
pub const fn rest(name: &'static str, kind: ArgKind) -> Arg {
    Arg {
        name,
        kind,
        optional: true,
        repeat: true,
        with_previous: false,
    }
}

/// The description of one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// The canonical name.
    pub name: &'static str,
    /// Other names that run the same command.
    pub aliases: &'static [&'static str],
    /// The `help` section.
    pub group: Group,
    /// The arguments, in order; optional ones after required ones.
    pub args: &'static [Arg],
    /// One paragraph: what the command does and why; its first sentence is
    /// the summary in the `help` list.
    pub help: &'static str,
}

impl CommandSpec {
    /// The usage line, e.g. `2d_memory_access_pattern NAME COLS TYPEBYTES ?save?`.
    pub fn usage(&self) -> String {
        let mut s = self.name.to_string();
        for arg in self.args {
            s.push(' ');
            match (arg.optional, arg.repeat) {
                (_, true) => s.push_str(&format!("?{} ...?", arg.name)),
                (true, false) => s.push_str(&format!("?{}?", arg.name)),
                (false, false) => s.push_str(arg.name),
            }
        }
        s
    }

    /// The first sentence of the help text: up to the first full stop
    /// followed by a space that is outside parentheses and does not end an
    /// abbreviation (`e.g.`, `i.e.`, `etc.`).
    pub fn summary(&self) -> &'static str {
        first_sentence(self.help)
    }

    /// Whether `word` is the name or an alias of this command.
    pub fn answers_to(&self, word: &str) -> bool {
        self.name == word || self.aliases.contains(&word)
    }

    /// Whether `args` (command name excluded) give every group of
    /// arguments joined by [`opt_with`] whole or not at all. A last word
    /// that is one of the choices of the last argument (such as `save`)
    /// is that argument, wherever the count puts it: `NAME save` leaves
    /// out the group `COLS TYPEBYTES`, `NAME 4 save` gives half of it.
    pub fn groups_whole(&self, args: &[String]) -> bool {
        let given = args.len() - usize::from(self.ends_with_choice(args));
        // A group is cut when its last given argument is followed, in the
        // table, by one that must come with it.
        !self
            .args
            .get(given)
            .is_some_and(|next| next.with_previous && given > 0)
    }

    /// Whether the last of `args` is the spec's last argument, an optional
    /// word such as `save`, whatever the count: it is one of that
    /// argument's choices and follows the required arguments
    /// (`alloc_sites save` leaves out N).
    pub fn ends_with_choice(&self, args: &[String]) -> bool {
        let required = self.args.iter().filter(|a| !a.optional).count();
        match (self.args.last(), args.last()) {
            (Some(last), Some(word)) if args.len() > required => {
                last.optional
                    && !last.with_previous
                    && !last.repeat
                    && matches!(last.kind, ArgKind::OneOf(c) if c.contains(&word.as_str()))
            }
            _ => false,
        }
    }

    /// The argument at position `index` (0-based, command name excluded),
    /// taking a trailing repeated argument into account.
    pub fn arg_at(&self, index: usize) -> Option<&Arg> {
        self.args
            .get(index)
            .or_else(|| self.args.last().filter(|a| a.repeat))
    }
}

const SAVE: ArgKind = ArgKind::OneOf(&["save"]);

/// Every mapvis command, in `help` order within each group.
pub const SPECS: &[CommandSpec] = &[
    // Setup
    CommandSpec {
        name: "load_exe",
        aliases: &[],
        group: Group::Setup,
        args: &[req("PATH", ArgKind::Path)],
        help: "Loads the C program to analyse. PATH is an executable built with \
               debug information (cc -g) so that accesses can be named after the \
               program's variables; it becomes the target of run_gleipnir and of \
               the Valgrind tool commands.",
    },
    CommandSpec {
        name: "set_src_path",
        aliases: &[],
        group: Group::Setup,
        args: &[req("DIR", ArgKind::Path), rest("DIR", ArgKind::Path)],
        help: "Sets the folders (searched recursively) holding the program's C \
               sources. Heap blocks are named from the statement that allocated \
               them, so mapvis must find the source; without it they are named \
               file.c:LINE. compile_exe sets the source's folder for you.",
    },
    CommandSpec {
        name: "set_valgrind_path",
        aliases: &[],
        group: Group::Setup,
        args: &[req("PATH", ArgKind::Path)],
        help: "Sets the valgrind executable to run. Use it when the valgrind found \
               on PATH is not the build that contains the mapvis tracing tool. \
               It lasts for this session only: a later session does not take the \
               Valgrind binary from .mapvis/session.json (which may come from \
               someone else's folder), says so, and uses valgrind from PATH until \
               you set it again.",
    },
    CommandSpec {
        name: "set_arguments",
        aliases: &[],
        group: Group::Setup,
        args: &[rest("ARG", ArgKind::Text)],
        help: "Sets the command-line arguments given to the traced program. With \
               no argument, the program runs without arguments.",
    },
    CommandSpec {
        name: "set_mem_alloc",
        aliases: &[],
        group: Group::Setup,
        args: &[req("H|S|G|all", ArgKind::OneOf(&["H", "S", "G", "all"]))],
        help: "Chooses which memory the analysis keeps: H the heap, S the stack, \
               G global variables, or all of them. The choice applies from the \
               next filtering_process on.",
    },
    CommandSpec {
        name: "set_region",
        aliases: &[],
        group: Group::Setup,
        args: &[
            opt(
                "pins|off|function|lines|window",
                ArgKind::OneOf(&["pins", "off", "function", "lines", "window"]),
            ),
            rest("ARGS", ArgKind::Text),
        ],
        help: "Chooses what run_gleipnir and export_hpcmp trace: pins (the default) \
               the accesses between the program's GL_START and GL_STOP; off the whole \
               run from its first instruction; function NAME ?CALLS? each call of a \
               function, entry to return, callees included, in the thread that makes \
               it, also where the compiler inlined it (NAME as the source writes it: \
               kernel, Domain::CalcForce, kernel<double>, or with parameter types for \
               overloads, in the program or a shared library it links; CALLS all, N \
               or A-B, counted across threads from 1); lines \
               FILE:FIRST-LAST each execution of those lines, callees included; window \
               SKIP COUNT ?EVERY? COUNT accesses after the first SKIP of the run (all \
               threads), and again every EVERY accesses from one window's start to the \
               next, each window exactly COUNT accesses. Under function, lines and \
               window the pins are ignored; a name that matches no function or several \
               is refused with the candidates. The analysis and every page say which \
               region they hold. Alone, prints the setting; it is saved with the \
               folder's settings. Returns the setting's words.",
    },
    CommandSpec {
        name: "set_memory_limit",
        aliases: &[],
        group: Group::Setup,
        args: &[opt("SIZE", ArgKind::Text)],
        help: "Sets the memory mapvis's analysis may use: SIZE in bytes, or with \
               K, M or G (512M, 2G; at least 512M). memory_trace_analysis holds at \
               most an eighth of it as its table of unique locations, a thirty-second \
               as accesses and a sixth for the cache model it simulates as it \
               streams (past that, cache_stats simulates later); the locations that do not fit are counted in parts on \
               disk in .mapvis/ and merged at its end, and it says so. The other \
               commands read the saved analysis in batches; a figure numbers the \
               accesses it draws by location (their occurrence) in at most a quarter of \
               it, and refuses, saying so, the accesses of more locations than that \
               counts. The default is a \
               quarter of the machine's memory, at most 2G. Alone, prints the \
               setting; it is saved with the folder's settings. Returns the limit \
               in bytes.",
    },
    CommandSpec {
        name: "set_heap_grouping",
        aliases: &[],
        group: Group::Setup,
        args: &[req(
            "root|site|instances",
            ArgKind::OneOf(&["root", "site", "instances"]),
        )],
        help: "Chooses how memory_stats, cache_stats and the figures show heap \
               blocks: root (the default) gives the blocks of one name a single \
               row wherever they were allocated, so the blocks reached from one \
               root are one row (all rows of a table, net->w1[i]; a list's \
               nodes, named after its head), with their fields summed; site \
               gives the blocks allocated at one site under one name a single \
               row, and blocks named as elements of something (rows[i]) a row \
               each; instances gives every block its own row (n#1, n#2, ...) \
               under its full path (x.coefs for the buffer of the object x). \
               The instances of a local variable, one per frame it lived in (a \
               recursion's x#1, x#2, ...), are one row x under root and site and \
               a row each under instances.",
    },
    // Pipeline
    CommandSpec {
        name: "run_gleipnir",
        aliases: &[],
        group: Group::Pipeline,
        args: &[],
        help: "Runs the loaded program under Valgrind with the tracing tool and \
               records every memory access into a trace file. Press Ctrl-C to \
               stop a long run; the trace recorded so far is kept. The new trace \
               replaces the previous one only when it holds a region, so a run \
               that fails or is killed early keeps the previous trace and its \
               analysis. A program that forks leaves one trace per process; the \
               children's are named in the result.",
    },
    CommandSpec {
        name: "memory_trace_analysis",
        aliases: &[],
        group: Group::Pipeline,
        args: &[],
        help: "Reads the trace and names every access: heap blocks from their \
               allocation statement, stack and global variables from DWARF, and the \
               source line of each access. The analysis is saved in .mapvis/, so a \
               later session in this folder can go on without tracing again.",
    },
    CommandSpec {
        name: "notes",
        aliases: &[],
        group: Group::Pipeline,
        args: &[],
        help: "Lists every note of the saved analysis, numbered, as \
               memory_trace_analysis made them: what could not be named and why, \
               accesses left out, conditions that could not be evaluated. \
               memory_trace_analysis prints many notes of one kind as one line \
               with a count. Returns the notes as a list.",
    },
    CommandSpec {
        name: "filtering_process",
        aliases: &[],
        group: Group::Pipeline,
        args: &[opt("save", SAVE)],
        help: "Keeps the accesses of the memory kinds chosen by set_mem_alloc and \
               writes the allocation info and the order data (one row per access) \
               to visinfo/ as CSV and Parquet (see docs/data-files.md). Above 4 M \
               selected accesses the order data (about 40 bytes of CSV per access) \
               is written only with save. The figure commands and memory_stats use \
               the same selection.",
    },
    CommandSpec {
        name: "memory_stats",
        aliases: &[],
        group: Group::Pipeline,
        args: &[opt("save", SAVE)],
        help: "Prints, per variable: accesses, loads, stores, modifies, load_bytes \
               and store_bytes (a modify counts in both), distinct addresses, first \
               and last access time and threads; then the per-address table. With \
               save, writes visinfo/memory_stats.csv and \
               visinfo/memory_stats_addresses.csv. Heap blocks are named by where \
               the program keeps their addresses (net->w1[i], src), else by the \
               statement that allocated them, and shown one row per name \
               (set_heap_grouping root, the default; site and instances split \
               them). Returns a list of per-variable dicts.",
    },
    // Figures
    CommandSpec {
        name: "complete_memory_access_pattern",
        aliases: &[],
        group: Group::Figures,
        args: &[rest("save|arrays|NAME|-NAME", ArgKind::Name)],
        help: "Draws every access of the selected memory kinds (set_mem_alloc) into \
               figures/complete_memory_access_pattern.html: the original's 3D view \
               (occurrence index, variable, address, coloured by time) and a 2D \
               view of address over time with a panel per memory kind, coloured by \
               variable (stores in a darker shade), with a marker per operation. \
               Above the point budget (set_point_budget) both views show exact \
               groups of accesses; the 2D view then draws its groups as a raster \
               of blocks (redrawn finer when zoomed; hover gives a group's count, \
               times, addresses and operations). \
               Filter words pick the variables drawn: arrays keeps only arrays \
               (leaving out scalars such as loop counters and <static data>), NAME \
               keeps only the variables named (NAME also keeps its instances NAME#2, \
               ...; the stack pointer X@S that holds the heap block X is named \
               apart), -NAME leaves one out. With save, \
               the data behind it goes to visinfo/complete_memory_access_pattern.csv. \
               set_figure_colour colours the accesses by cache level or reuse \
               distance instead; hover gives each access' pattern label. \
               Returns the figure's path.",
    },
    CommandSpec {
        name: "2d_memory_access_pattern",
        aliases: &["2darray_memory_access_pattern"],
        group: Group::Figures,
        args: &[
            req("NAME", ArgKind::Name),
            opt("COLS", ArgKind::Text),
            opt_with("TYPEBYTES", ArgKind::Text),
            opt("save", SAVE),
        ],
        help: "Reconstructs the array NAME (heap, stack or global) as rows of COLS \
               elements of TYPEBYTES bytes and draws how it was accessed into \
               figures/2d_memory_access_pattern_NAME.html: the original's 3D \
               scatter (column, occurrence index, row, coloured by time), heatmaps \
               of access count, first and last access time and loads against \
               stores, and a replay of the traversal. COLS and TYPEBYTES may be \
               left out when the array's type or allocation statement gives them. \
               Left out for an array of structures, the rows are its elements and \
               the columns its fields, named as in the source (x, y, pos.z): \
               every field of the type gets a column, those the region never touched \
               left blank (the wasted bytes of the layout). Without a GPU the 3D \
               scatter is drawn when its button is clicked (or at load when the \
               address ends in #3d), so the page opens at once. \
               With save, the data goes to visinfo/. set_figure_colour colours the \
               scatter by cache level or reuse distance. Returns the figure's path.",
    },
    CommandSpec {
        name: "3d_memory_access_pattern",
        aliases: &["3darray_memory_access_pattern"],
        group: Group::Figures,
        args: &[
            req("NAME", ArgKind::Name),
            opt("COLS", ArgKind::Text),
            opt_with("DEPTH", ArgKind::Text),
            opt_with("TYPEBYTES", ArgKind::Text),
            opt("save", SAVE),
        ],
        help: "Reconstructs the array NAME as rows of COLS x DEPTH elements of \
               TYPEBYTES bytes (element = i*COLS*DEPTH + j*DEPTH + k) and draws it \
               into figures/3d_memory_access_pattern_NAME.html: the original's \
               scatter (j, k, i, coloured by time) and per-slice heatmaps with a \
               slider. With save, the data goes to visinfo/. set_figure_colour \
               colours the scatter by cache level or reuse distance. Returns the \
               figure's path.",
    },
    // Housekeeping
    CommandSpec {
        name: "clear_analysis",
        aliases: &[],
        group: Group::Housekeeping,
        args: &[],
        help: "Removes the files mapvis wrote in the working folder, file by file, \
               and lists them: the trace and saved analysis in .mapvis/, the figures \
               and plotly.js in figures/, the data files in visinfo/ and the output \
               in grindanalysis/. Only files listed in .mapvis/manifest.json when \
               mapvis wrote them are removed, and only if unchanged since; your own \
               files, files you changed, and anything reached through a symbolic \
               link are kept. The setup (program, arguments, paths) is kept. Files \
               you name yourself, such as the FILE of export_memtrace and \
               export_ops, are yours and are never removed.",
    },
    CommandSpec {
        name: "help",
        aliases: &[],
        group: Group::Housekeeping,
        args: &[opt("COMMAND|GROUP|all", ArgKind::Command)],
        help: "Lists the commands by group on one screen; with a GROUP (the word \
               help shows before each group: figures, caches, heap, ...) lists that \
               group's commands with their usage and summary, with all every group's; \
               with a COMMAND shows its usage and description. Every Tcl 8.6 command \
               (set, proc, foreach, ...) works too.",
    },
    CommandSpec {
        name: "history",
        aliases: &[],
        group: Group::Housekeeping,
        args: &[],
        help: "Lists the commands entered at the prompt, numbered. Type !N to run \
               command N again and !! to repeat the last one.",
    },
    CommandSpec {
        name: "exit",
        aliases: &["quit"],
        group: Group::Housekeeping,
        args: &[opt("CODE", ArgKind::Int)],
        help: "Leaves mapvis, with exit status CODE (0 by default). Ctrl-D at an \
               empty prompt does the same.",
    },
    // Valgrind tools
    CommandSpec {
        name: "lackey",
        aliases: &[],
        group: Group::ValgrindTools,
        args: &[],
        help: "Runs the loaded program under Valgrind's lackey tool. It counts \
               instructions, loads and stores, and prints the summary. Output goes to grindanalysis/.",
    },
    CommandSpec {
        name: "helgrind",
        aliases: &[],
        group: Group::ValgrindTools,
        args: &[],
        help: "Runs the loaded program under Valgrind's helgrind tool. It reports \
               data races and lock misuse in threaded programs. Output goes to grindanalysis/.",
    },
    CommandSpec {
        name: "cachegrind",
        aliases: &[],
        group: Group::ValgrindTools,
        args: &[],
        help: "Runs the loaded program under Valgrind's cachegrind tool. It \
               simulates the caches and reports hits and misses per function; the miss rates are printed. Output goes to grindanalysis/.",
    },
    CommandSpec {
        name: "massif",
        aliases: &[],
        group: Group::ValgrindTools,
        args: &[],
        help: "Runs the loaded program under Valgrind's massif tool. It profiles \
               heap usage over time; the peak is printed. Output goes to grindanalysis/.",
    },
    CommandSpec {
        name: "dhat",
        aliases: &[],
        group: Group::ValgrindTools,
        args: &[],
        help: "Runs the loaded program under Valgrind's DHAT tool. It reports how \
               each heap block is used (lifetime, reads, writes); the totals are printed. Output goes to grindanalysis/.",
    },
    // Added by mapvis, grouped by topic in help
    CommandSpec {
        name: "compile_exe",
        aliases: &[],
        group: Group::Setup,
        args: &[req("SOURCE.c", ArgKind::Path), rest("FLAG", ArgKind::Text)],
        help: "Compiles SOURCE.c with cc -g3 -O0, the pins header gleipnir.h on the \
               include path and the extra FLAGs (-pthread, -lm, -DN=64, ...) into \
               .mapvis/bin/, then loads it as load_exe does and sets its folder as \
               the source path. -g3 keeps the -D macros in the debug information, \
               so heap blocks declared through them are named.",
    },
    CommandSpec {
        name: "load_trace",
        aliases: &[],
        group: Group::Pipeline,
        args: &[req("FILE", ArgKind::Path)],
        help: "Loads a trace recorded earlier instead of running the program. \
               Gleipnir text traces are imported too.",
    },
    CommandSpec {
        name: "set_open_browser",
        aliases: &[],
        group: Group::Figures,
        args: &[req("on|off", ArgKind::OneOf(&["on", "off"]))],
        help: "Chooses whether figure commands open their HTML in a web browser \
               (on) or only write the file (off).",
    },
    CommandSpec {
        name: "set_point_budget",
        aliases: &[],
        group: Group::Figures,
        args: &[req("POINTS", ArgKind::Int)],
        help: "Sets how many points a figure draws before it aggregates exactly \
               (bins by time and address, or by element, keeping the counts and \
               saying so in the title). The default is 200000; browsers cope with \
               a few million at most, so the limit is 50000000. 3D views draw at \
               most 20000 points whatever the budget.",
    },
    CommandSpec {
        name: "set_matrix_orientation",
        aliases: &[],
        group: Group::Figures,
        args: &[req("on|off", ArgKind::OneOf(&["on", "off"]))],
        help: "With on, the 2D and 3D array figures put row 0 at the top, as a \
               matrix is written; with off (the default, as in the original), row \
               0 is at the bottom left.",
    },
    CommandSpec {
        name: "dump_trace",
        aliases: &[],
        group: Group::Pipeline,
        args: &[opt("FILE", ArgKind::Path), opt("LIMIT", ArgKind::Int)],
        help: "Prints the binary trace FILE (by default the last one traced) as \
               text, one event per line: header, load map, heap events, regions \
               and accesses with their instruction, stack and frame pointers. \
               Prints at most LIMIT events (200 by default). The format is in \
               docs/trace-format.md.",
    },
    CommandSpec {
        name: "set_cache",
        aliases: &[],
        group: Group::Locality,
        args: &[
            opt("LEVEL", ArgKind::OneOf(&["L1", "L2", "L3", "default"])),
            opt("SIZE", ArgKind::Text),
            opt("WAYS", ArgKind::Text),
            opt("LINE", ArgKind::Text),
        ],
        help: "Sets the cache model that cache_stats simulates: set_cache L1 32K 8 64 \
               sets a level's size, associativity and line size (up to three \
               levels, L1 to L3); set_cache L2 off removes a level; set_cache \
               default goes back to this machine's caches (read from \
               /sys/devices/system/cpu/cpu0/cache); with no argument it prints the \
               model. Levels are LRU and write-allocate, an outer level is looked \
               up only on a miss above (as in cachegrind), L1 is private to each \
               thread. The model is kept in .mapvis/ for later sessions.",
    },
    CommandSpec {
        name: "set_reuse_sampling",
        aliases: &[],
        group: Group::Locality,
        args: &[req("RATE|off|auto", ArgKind::Text), opt("N", ArgKind::Int)],
        help: "Makes cache_stats estimate reuse distance from a sample of the cache \
               lines (SHARDS spatial sampling, e.g. 0.01 for 1% of lines) instead of \
               exactly, for very long traces; off computes exact distances always; \
               auto N (the default, N = 1000000000) is exact up to N accesses and \
               samples 1% of the lines above them, and the report says so.",
    },
    CommandSpec {
        name: "set_figure_colour",
        aliases: &[],
        group: Group::Figures,
        args: &[
            req(
                "default|hit|reuse|miss",
                ArgKind::OneOf(&["default", "hit", "reuse", "miss"]),
            ),
            opt("LEVEL", ArgKind::OneOf(&["L1", "L2", "L3"])),
        ],
        help: "Chooses how complete_memory_access_pattern and the 2D and 3D array \
               figures colour their accesses: default colours by time (3D views) \
               and by variable (2D view); hit by the level of the set_cache model \
               that served each access (L1 hit, L2 hit, L3 hit, miss to memory), \
               simulated as cache_stats does from cold caches at the region's start over all \
               accesses in time order, even when the figure shows one variable; \
               reuse by the exact reuse distance in distinct cache lines, in \
               power-of-two bins (reuse 64-127 lines), with first touch apart; \
               miss ?LEVEL? by why each access missed that level (L1 by \
               default) in the 3C model of cache_stats: conflict, capacity or \
               compulsory miss, or no miss there. \
               Each class is a trace of its own with its name in the legend; \
               above the point budget a point groups accesses of several classes \
               and is coloured by their mix (mean class; the miss ratio with one \
               cache level). \
               Hover text also gives each access' pattern label. Kept in .mapvis/ \
               for later sessions.",
    },
    CommandSpec {
        name: "cache_stats",
        aliases: &[],
        group: Group::Locality,
        args: &[rest("save|quiet", ArgKind::OneOf(&["save", "quiet"]))],
        help: "Simulates the cache model (set_cache) over the traced region, caches \
               cold at its start (GL_START, or the program's first instruction under set_region off), and prints per variable, per source line and per \
               (variable, line): accesses, misses at each level, compulsory misses, \
               miss ratio and the bytes used of each fetched line; each level's \
               misses by class (the 3C model: compulsory, the line's first use \
               there; capacity, a fully associative cache of the same size would \
               miss too; conflict, only the mapping of lines to sets lost it), \
               in the dicts as compulsory_L1, capacity_L1, conflict_L1 … per \
               level (compulsory alone is L1's); the access \
               pattern of each (variable, line) (row-wise, column-wise, stride, \
               irregular); and the reuse distance per variable with the miss ratio \
               it implies. Runs on the saved analysis, so a new set_cache needs no \
               new trace. The model set when memory_trace_analysis ran is \
               simulated as the trace is analysed, so for that model cache_stats \
               only reads its counts and says so. With save, writes visinfo/cache_stats.csv, \
               cache_stats_lines.csv, cache_stats_pairs.csv, reuse_distance.csv and \
               miss_ratio_curves.csv (and Parquet), figures/cache_stats.html (misses \
               per level and miss-ratio curves by variable) and \
               figures/source_FILE.html (the source annotated line by line). \
               With quiet, prints nothing, for scripts that only want the value. \
               Returns a list of per-variable dicts.",
    },
    CommandSpec {
        name: "what_if",
        aliases: &[],
        group: Group::Locality,
        args: &[
            req("NAME", ArgKind::Name),
            req(
                "LAYOUT",
                ArgKind::OneOf(&[
                    "transpose",
                    "soa",
                    "pad",
                    "align",
                    "interchange",
                    "tile",
                    "-layouts",
                ]),
            ),
            rest("ARGS", ArgKind::Text),
        ],
        help: "Predicts the caches under another layout of one array, from the trace \
               already recorded: transpose ?ROWS COLS ELEMBYTES? stores a 2D array \
               the other way; soa splits an array of structures into one array per \
               accessed field, named NAME.field; pad BYTES pads each row of a 2D \
               array (each element of a 1D array or array of structures), placing \
               the array past the highest address the trace touches at the same \
               offset within the largest cache way; align BYTES moves the base up \
               to a multiple of BYTES. Two loop changes replay the accesses in \
               another order instead: interchange ?FILE:LINE? swaps the two loops of \
               the nest that walks the 2D array column by column on that line (the \
               array's line with the most L1 misses by default), and tile SIZE \
               ?FILE:LINE? cuts both loops into blocks of SIZE; the nest must show \
               in the trace (one element per iteration, the same accesses to heap \
               and global data in each), or nothing is predicted and the reason is \
               given. what_if NAME -layouts {{transpose} {pad 64} {interchange}} \
               predicts several together over one pass of the trace (their models \
               on two threads) and returns one list of per-variable dicts per \
               layout, in the order given. Shapes are inferred as the 2D figure \
               infers them. The addresses of NAME's accesses are rewritten and the \
               cache model (set_cache) runs again over every access, so conflicts \
               with other variables are still modelled; accesses that \
               straddle elements are kept as recorded and counted. Prints before \
               and after per variable and per source line of NAME, and returns the \
               per-variable dicts of the new layout, as cache_stats does. With a \
               last word save, also writes visinfo/what_if_NAME_LAYOUT.csv (every \
               variable before and after) and figures/what_if_NAME_LAYOUT.html: \
               NAME's byte offsets over time before and after side by side on a \
               shared time axis, and its misses per level before and after; the \
               page is a prediction from the recorded trace, not a new trace.",
    },
    CommandSpec {
        name: "advise",
        aliases: &[],
        group: Group::Locality,
        args: &[rest("NAME|save", ArgKind::Name)],
        help: "Tries every change what_if can predict (align to a line; pad \
               each row by the fewest lines that spread a column over every set of \
               L1, and by one line; interchange of the nest that walks it column by \
               column; soa; tiling that nest, with tile sizes from L1's geometry; \
               transpose) on the named arrays, or on the three with the most L1 misses, and prints those \
               that save misses, ranked by L1 misses saved (then L2, then the least \
               invasive change): the change, the variable and its source lines, its \
               misses per level before and after, why (from its miss classes and \
               access pattern) and the what_if command that reproduces the \
               prediction. A variable no change helps gets nothing to suggest, with \
               the reason, and a nest the trace does not show gets no loop change, \
               with the reason. A loop change is ranked by the misses of every array \
               its iterations access. Returns a list of dicts (change, variable, \
               touches, lines, \
               misses_before_L1, misses_after_L1 … per level, why, command); with a \
               last word save, also writes visinfo/advice.csv.",
    },
    CommandSpec {
        name: "sharing_stats",
        aliases: &[],
        group: Group::Locality,
        args: &[opt("save", SAVE)],
        help: "Finds cache lines written by one thread and accessed by another, and \
               tells true sharing (the same bytes) from false sharing (disjoint \
               bytes of one line): for each line, the variables and fields, the bytes \
               each thread read and wrote, and the cross-thread transfers a coherent \
               cache would make. With save, writes visinfo/sharing_stats.csv (and \
               Parquet) and figures/sharing.html (each shared line's bytes by \
               thread, read or written, named by variable and field). Returns a \
               list of per-line dicts.",
    },
    CommandSpec {
        name: "save_run",
        aliases: &[],
        group: Group::Runs,
        args: &[req("LABEL", ArgKind::Text)],
        help: "Keeps the current trace and its analysis as the run LABEL in \
               .mapvis/runs/LABEL/, by hard links (no data is copied), so a later \
               trace of another version of the program does not replace them. \
               LABEL is 1 to 64 letters, digits, '_', '-' or '.'. Runs survive \
               sessions; clear_analysis removes them with mapvis's other files. \
               Returns the label.",
    },
    CommandSpec {
        name: "runs",
        aliases: &[],
        group: Group::Runs,
        args: &[],
        help: "Lists the saved runs in the order they were saved: label, program, \
               arguments, when it was saved, accesses, and whether its trace is complete or partial; the current \
               run (use_run) is marked. Returns a list of dicts.",
    },
    CommandSpec {
        name: "use_run",
        aliases: &[],
        group: Group::Runs,
        args: &[req("LABEL", ArgKind::Run)],
        help: "Makes the run LABEL current: every command then reads its trace and \
               analysis (memory_stats, cache_stats, the figures), until run_gleipnir, \
               load_trace or memory_trace_analysis makes a new one, which never \
               changes the saved run. Returns the label.",
    },
    CommandSpec {
        name: "verify_analysis",
        aliases: &[],
        group: Group::Runs,
        args: &[opt("RUN", ArgKind::Run)],
        help: "Hashes every file of the saved run RUN (its trace, analysis and \
               run.json), or of the folder's own saved analysis, and compares each \
               with what mapvis recorded when it wrote it: prints one line per file \
               (ok, changed, missing or added) and returns a dict with those four \
               lists. Finds an edit that kept a file's size and time (a folder \
               copied with cp -a from an edited one), which the quick check by size \
               and time cannot. use_run and compare_runs hash a run's files this way \
               whenever they total under 256 MB. Cost: reading every file once.",
    },
    CommandSpec {
        name: "drop_run",
        aliases: &[],
        group: Group::Runs,
        args: &[req("LABEL", ArgKind::Run)],
        help: "Removes the run LABEL: the files mapvis wrote in its folder, as \
               clear_analysis removes files (a file changed since is kept). \
               Returns the number of files removed.",
    },
    CommandSpec {
        name: "compare_runs",
        aliases: &[],
        group: Group::Runs,
        args: &[req("A", ArgKind::Run), req("B", ArgKind::Run), opt("save", SAVE)],
        help: "Compares two saved runs variable by variable under the current \
               cache model (set_cache) and memory kinds (set_mem_alloc): \
               variables are aligned by name, never by address, and for each the \
               accesses, bytes accessed, misses at each level, miss ratio, bytes \
               used per fetched line, reuse distance (median and 90th percentile, \
               as the bounds of their power-of-two bin) and the pattern of its \
               busiest line are printed for A and B with the change, absolute and \
               in percent, sorted by the largest change in L1 misses; variables \
               found in one run only are listed apart. Then per (variable, line) \
               pair, aligned by variable and pattern label (not by line number), \
               then by walk direction where one run's loop is tiled (pairs \
               sharing a key matched busiest with busiest), with both \
               source lines; pairs left in one run only are listed apart, not \
               compared. Each run's numbers are its own cache_stats numbers. With \
               save, writes visinfo/compare_A_B.csv (with the changes), \
               visinfo/compare_A_B_pairs.csv and figures/compare_A_B.html (per \
               variable: both runs' address over time, misses per level, \
               miss-ratio curves, and links to each run's annotated source in \
               figures/run_LABEL/). \
               Returns a list of dicts with keys variable, a and b, where a and b \
               hold cache_stats' per-variable keys (empty where the variable is \
               not in that run).",
    },
    CommandSpec {
        name: "plot_runs",
        aliases: &[],
        group: Group::Runs,
        args: &[req("METRIC", ArgKind::Text), rest("RUN", ArgKind::Run)],
        help: "Draws one metric of each variable across saved runs, as a sweep \
               over block sizes or layouts: METRIC is a key of cache_stats' \
               per-variable dicts (accesses, misses_L1, misses_L2 … for each \
               level of set_cache, compulsory, miss_ratio, line_bytes_used, \
               conflict_L1, capacity_L1 …). The \
               runs are those listed (plot_runs misses_L1 b8 b16 b32), in that \
               order, or every saved run in the order they were saved (as runs lists them); after the word \
               -vars, only the variables named (plot_runs misses_L1 -vars X Y). \
               Each run's number is its own cache_stats number under the current \
               model and memory kinds; a partial run is marked (partial). Prints \
               a table of variables by runs and writes figures/runs_METRIC.html \
               (a line per variable against the runs) and visinfo/runs_METRIC.csv \
               (run, complete, variable, value). Returns a list of dicts with keys \
               run, variable, value and complete. Costs one cache simulation per \
               run.",
    },
    CommandSpec {
        name: "heap_profile",
        aliases: &[],
        group: Group::Heap,
        args: &[rest(
            "time_all|calls",
            ArgKind::OneOf(&["time_all", "calls"]),
        )],
        help: "Runs the loaded program natively (with set_arguments' arguments) \
               under mapvis's heap profiler, an LD_PRELOAD library that takes \
               every malloc, calloc, realloc, free, memalign, posix_memalign, \
               aligned_alloc, valloc and C++ new/delete with its size, thread, \
               time and call stack, in per-thread buffers, plus RSS every 10 \
               ms. A collector thread summarises the calls as the program runs \
               (sites, sizes, peak, leaks, temporaries, times, the live heap \
               over time, block lifetimes), so the profile holds that summary, \
               kilobytes whatever the number of calls; with calls, every call \
               is written as well (about 1.6 bytes a call), which \
               lifetime_histogram save needs for its per-block table. A \
               program that ends without exit() (killed, a crash, _exit) keeps \
               the summary of its last checkpoint (every second, after 32 s \
               every 32nd of the run so far), shown as partial. The time a call spends in the allocator is measured for a \
               sample: each thread times a pseudo-random one in about 64 of its \
               calls, so heap_stats' times per call are estimates (it says how \
               many calls were timed); every call is still counted. With \
               time_all, every call is timed (exact durations, each call a \
               little slower). The pins mark their region; the whole run is \
               profiled. Writes .mapvis/heap.mvh (docs/heap-profile-format.md) \
               and prints a summary. Stacks come from frame pointers: compile \
               with -O0 or -fno-omit-frame-pointer for whole stacks.",
    },
    CommandSpec {
        name: "alloc_sites",
        aliases: &[],
        group: Group::Heap,
        args: &[opt("N", ArgKind::Int), opt("save", SAVE)],
        help: "Lists the top N (default 10) allocation sites (distinct call \
               stacks) by bytes allocated, by number of allocations, by peak \
               live bytes, by leaked bytes and by temporary allocations (freed \
               by the allocating thread before it allocated again, as heaptrack \
               counts them), each with its symbolized backtrace, inlined frames \
               included. Uses the newer of the heap profile and the Valgrind \
               trace; under Valgrind the stacks have the traced depth and times \
               are operations. With save, every site goes to \
               visinfo/alloc_sites.csv.",
    },
    CommandSpec {
        name: "heap_stats",
        aliases: &[],
        group: Group::Heap,
        args: &[opt("save", SAVE)],
        help: "Prints allocator statistics: allocations, bytes and frees per \
               size class; peak live bytes against peak RSS (blowup); internal \
               fragmentation (requested bytes against malloc_usable_size); and \
               the median, p99 and maximum time per call by size class and by \
               thread, with how many calls were timed (estimates from a sample \
               of about 1 in 64 calls unless heap_profile time_all timed every \
               call). Times, usable sizes and RSS come from heap_profile only: \
               under Valgrind they are not meaningful and are left out. With \
               save, writes visinfo/heap_size_classes.csv and \
               visinfo/heap_op_times.csv.",
    },
    CommandSpec {
        name: "heap_figures",
        aliases: &[],
        group: Group::Heap,
        args: &[opt("N", ArgKind::Int), opt("save", SAVE)],
        help: "Draws figures/heap_profile.html: live heap over time for the N \
               (default 5) sites with the highest peak, stacked, as massif and \
               heaptrack show it; a flame graph (icicle) of allocated bytes by \
               call stack; and the size-class histogram. With save, the live \
               heap series goes to visinfo/heap_live.csv.",
    },
    CommandSpec {
        name: "lifetime_histogram",
        aliases: &[],
        group: Group::Heap,
        args: &[opt("save", SAVE)],
        help: "Draws figures/lifetime_histogram.html: the histogram of block \
               macro lifetimes, as in Steve's figures. A block's lifetime is \
               the number of operations (accesses and allocator calls) between \
               its allocation and its free in a trace, or nanoseconds in a heap \
               profile; its macro lifetime is that as a share of the whole run. \
               A heap profile recorded without calls holds the lifetimes in \
               buckets under 0.2% wide, so a block near a bin's edge may be \
               counted in its neighbour; the figure says how many may be. \
               With save, every freed block's lifetime goes to \
               visinfo/lifetimes.csv (a trace, or heap_profile calls).",
    },
    CommandSpec {
        name: "export_memtrace",
        aliases: &[],
        group: Group::Exports,
        args: &[req("FILE", ArgKind::Path)],
        help: "Writes the trace as Steve's memtrace: one line '>>> OP ADDRESS \
               SIZE' per operation in time order, OP one of N (new), F (free, \
               size 0), L, S, M (load, store, modify), the address in hex. A \
               realloc that moves a block is F of the old block then N of the \
               new one. Streams: works at any trace size.",
    },
    CommandSpec {
        name: "export_ops",
        aliases: &[],
        group: Group::Exports,
        args: &[req("FILE", ArgKind::Path)],
        help: "Writes Steve's ops file: one line 'HANDLE OP ADDRESS SIZE LOCKED' \
               per operation on a heap block, HANDLE unique per block for the \
               run, and LOCKED Steve's lock estimate for the block at that \
               operation (its life rises by 1 at each of its own accesses, falls \
               by 0.5 at every other block's operation, never below 0; locked \
               while above 0). Computed in one streaming pass (O(n)).",
    },
    CommandSpec {
        name: "export_hpcmp",
        aliases: &[],
        group: Group::Exports,
        args: &[
            req("FILE", ArgKind::Path),
            opt("SCOPE", ArgKind::OneOf(&["whole", "pins"])),
        ],
        help: "Traces the loaded program again, with its thread and mutex \
               operations and per-thread instruction counts, and writes HPCMP's \
               JSON: a list of events {thid, icnt, id} (thread number, \
               instructions the thread ran since its previous event, event \
               number), each with either sync (fork, join, exit as join null, \
               acq, rel, with usage: the heap blocks the thread read and wrote \
               since its previous sync event, in bytes r and w per block) or \
               life (alloc, free with the freeing thread's usage of the block, \
               newsync and delsync of a mutex). HPCMP's README writes the \
               release with the key acq, as the acquire, which looks like a \
               typo: mapvis writes rel. SCOPE whole counts every read and write \
               of the run, as HPCMP does; pins only those between GL_START and \
               GL_STOP. Without SCOPE: pins when the program has them, else the \
               whole run; the report says which. Usage a thread has not \
               reported by its end goes out in its exit event. The trace is \
               .mapvis/hpcmp.mvt; the current trace is left alone. Streams: \
               works at any trace size.",
    },
];

/// The spec answering to `word` (a name or an alias).
pub fn find(word: &str) -> Option<&'static CommandSpec> {
    SPECS.iter().find(|s| s.answers_to(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_lines_match_the_manual() {
        assert_eq!(
            find("2darray_memory_access_pattern").unwrap().usage(),
            "2d_memory_access_pattern NAME ?COLS? ?TYPEBYTES? ?save?"
        );
        assert_eq!(
            find("set_mem_alloc").unwrap().usage(),
            "set_mem_alloc H|S|G|all"
        );
        assert_eq!(
            find("set_arguments").unwrap().usage(),
            "set_arguments ?ARG ...?"
        );
        assert_eq!(
            find("compile_exe").unwrap().usage(),
            "compile_exe SOURCE.c ?FLAG ...?"
        );
        assert_eq!(find("quit").unwrap().name, "exit");
        assert_eq!(
            find("load_exe").unwrap().summary(),
            "Loads the C program to analyse."
        );
    }

    #[test]
    fn table_is_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for spec in SPECS {
            for name in std::iter::once(&spec.name).chain(spec.aliases) {
                assert!(seen.insert(*name), "duplicate command name {name}");
            }
            let first_optional = spec.args.iter().position(|a| a.optional);
            if let Some(i) = first_optional {
                assert!(spec.args[i..].iter().all(|a| a.optional), "{}", spec.name);
            }
            for (i, a) in spec.args.iter().enumerate() {
                assert!(!a.repeat || i + 1 == spec.args.len(), "{}", spec.name);
                // A group starts at an optional argument and is not repeated.
                assert!(
                    !a.with_previous || (i > 0 && spec.args[i - 1].optional && !a.repeat),
                    "{}",
                    spec.name
                );
            }
            assert!(spec.help.ends_with('.'), "{}", spec.name);
            // A summary is a whole sentence: its parentheses close, and it
            // does not stop at an abbreviation.
            let sum = spec.summary();
            assert_eq!(sum.matches('(').count(), sum.matches(')').count(), "{sum}");
            assert!(!sum.ends_with("e.g.") && !sum.ends_with("i.e."), "{sum}");
        }
    }

    #[test]
    fn a_summary_runs_past_abbreviations_and_parentheses() {
        assert_eq!(
            first_sentence("Uses a sample (e.g. 0.01 for 1%. Or so) instead. More."),
            "Uses a sample (e.g. 0.01 for 1%. Or so) instead."
        );
        assert_eq!(
            first_sentence("Lists, e.g. sites. Then more."),
            "Lists, e.g. sites."
        );
        assert_eq!(first_sentence("One sentence."), "One sentence.");
    }
}
