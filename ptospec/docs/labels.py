"""UI labels of the generated pages in every site language (prose comes from the YAML)."""

from __future__ import annotations

LANGS = ("en", "zh")
LANG_NAMES = {"en": "English", "zh": "中文"}

LABELS: dict[str, dict[str, str]] = {
    "site_title": {"en": "PTO tile ISA reference", "zh": "PTO Tile 指令集参考"},
    "home": {"en": "Overview", "zh": "概览"},
    "kernels_page": {"en": "Walking through whole kernels", "zh": "完整内核走读"},
    "kernels_intro": {
        "en": "Two kernels written for this site in the PTO assembler's dialect (`docs/examples/` in the "
              "repository): a vector kernel and a matrix-multiply kernel. Every command output below was printed "
              "by ptospec when the site was generated, on inputs made from fixed seeds (times are blanked); "
              "`ptospec docs build --check` notices when a kernel or an output changes. The command line speaks "
              "English only, so its output is shown as printed.",
        "zh": "为本站用 PTO 汇编器方言编写的两个内核（仓库中的 `docs/examples/`）：一个向量内核和一个矩阵乘内核。"
              "下面每条命令的输出都是生成本站时由 ptospec 打印的，输入由固定种子生成（耗时已隐去）；"
              "内核或输出一旦变化，`ptospec docs build --check` 就会发现。命令行只输出英文，故输出保持原样。",
    },
    "kernel_softmax_title": {"en": "A vector kernel: row softmax", "zh": "向量内核：按行 softmax"},
    "kernel_softmax_intro": {
        "en": "For each block of 16 rows the kernel loads the rows into a Vec tile, takes each row's maximum "
              "(TROWMAX, with a scratch tile), subtracts it (TROWEXPANDSUB, one value per row), exponentiates "
              "(TEXP, in place), sums each row (TROWSUM) and divides by the sum (TROWEXPANDDIV), then stores the "
              "block. Subtracting the maximum first keeps every exponential at most 1.",
        "zh": "内核每次处理 16 行：把这些行加载到 Vec Tile，求每行最大值（TROWMAX，需要一个临时 Tile），"
              "减去它（TROWEXPANDSUB，每行一个值），取指数（TEXP，原地），求每行之和（TROWSUM），"
              "再除以该和（TROWEXPANDDIV），最后存回。先减去最大值可使每个指数都不超过 1。",
    },
    "kernel_matmul_title": {"en": "A matrix-multiply kernel with a K loop", "zh": "带 K 循环的矩阵乘内核"},
    "kernel_matmul_intro": {
        "en": "C = A × B with A of 16 × K and B of K × 16 in f16 and C in f32. Each step of the K loop loads a "
              "16 × 16 block of A and one of B into Mat tiles, moves them into the Left and Right tiles the cube "
              "reads (TMOV), and multiplies: TMATMUL on the first step, TMATMUL_ACC (adding to the accumulator) "
              "on the others. The accumulator is stored once, after the loop.",
        "zh": "C = A × B，A 为 16 × K、B 为 K × 16（f16），C 为 f32。K 循环的每一步把 A 与 B 的一个 16 × 16 "
              "块加载到 Mat Tile，再移动（TMOV）到 Cube 读取的 Left 与 Right Tile，然后相乘：第一步用 TMATMUL，"
              "其余各步用 TMATMUL_ACC（累加到累加器）。循环结束后累加器只存回一次。",
    },
    "kernel_ops": {"en": "Instructions it uses:", "zh": "用到的指令："},
    "kernel_check": {"en": "Checking it", "zh": "检查"},
    "kernel_check_read": {
        "en": "`check-program` walks every statement once (both branches of an `if`, a loop body once) and "
              "checks every instruction it can with the values known without running: constants and what is "
              "computed from them. Rules that need a run-time value (here the loop index, which decides the "
              "partition's offsets) are *deferred*: counted here, checked when the kernel runs. Exit status 0: "
              "nothing illegal was found.",
        "zh": "`check-program` 对每条语句只走一遍（`if` 的两个分支都走，循环体走一次），用不运行就能知道的值"
              "（常量及由其算出的值）检查每条指令。需要运行时值的规则（这里是决定分区偏移的循环下标）被*推迟*："
              "此处只计数，运行内核时再检查。退出状态 0 表示没有发现非法之处。",
    },
    "kernel_run": {"en": "Running it", "zh": "运行"},
    "kernel_inputs": {"en": "Inputs (NumPy files): {inputs}.", "zh": "输入（NumPy 文件）：{inputs}。"},
    "kernel_result": {
        "en": "Compared with NumPy on the same inputs (computed in double precision), the largest difference "
              "in {name} is {error}.",
        "zh": "与 NumPy 对同一输入的结果（双精度计算）相比，{name} 的最大差为 {error}。",
    },
    "kernel_finding_title": {"en": "Reading a finding", "zh": "如何阅读一条检查结果"},
    "kernel_finding_intro": {
        "en": "The matrix kernel again, with one change on line {line} of {file}: the Left tile type says "
              "{bad} instead of {good}, that is, row-major blocks of boxes (ZZ) instead of column-major ones "
              "(NZ):",
        "zh": "仍是矩阵乘内核，只在 {file} 第 {line} 行改动一处：Left Tile 类型写成 {bad} 而不是 {good}，"
              "即分块按行主序排列（ZZ）而不是按列主序（NZ）：",
    },
    "kernel_finding_read": {
        "en": "Each finding is one line: `file:line:col` of the statement; the rule's id in brackets "
              "(`layout.left-a5`); the instruction and mode it belongs to; the operands it concerns (`src0`); "
              "what the rule requires; and, in parentheses, the values it saw. The rule's id is in the rules "
              "tables of the instruction's page (here [TMATMUL](ops/tmatmul.md), Tile types and layouts), with "
              "the profiles it applies to and its source. Both multiplies are reported, each where it stands; "
              "TMOV accepts the ZZ tile, so the load and the move are legal. Exit status 1: violations.",
        "zh": "每条结果占一行：语句的 `文件:行:列`；方括号中的规则 id（`layout.left-a5`）；所属的指令与模式；"
              "涉及的操作数（`src0`）；规则的要求；括号中是它看到的值。规则 id 可在该指令页面的规则表中找到"
              "（此处为 [TMATMUL](ops/tmatmul.md) 的 Tile 类型与布局），并注明适用的 profile 与来源。"
              "两次乘法各在其位置被报告；TMOV 接受 ZZ Tile，因此加载与移动是合法的。退出状态 1：存在违规。",
    },
    # the words inside formulas (ptospec.expr.latex.WORDS; {} stands for a value)
    "math_otherwise": {"en": "otherwise", "zh": "其他情况"},
    "math_if": {"en": "if", "zh": "当"},
    "math_where": {"en": "where", "zh": "仅当"},
    "math_first_wins": {"en": "(first write in index order wins)", "zh": "（按下标顺序，首次写入生效）"},
    "math_last_wins": {"en": "(last write in index order wins)", "zh": "（按下标顺序，最后一次写入生效）"},
    "math_combined": {"en": "(combined by {}, in index order)", "zh": "（按下标顺序以 {} 合并）"},
    "home_intro": {
        "en": "Every page of this site is generated from the ptospec spec database: the same YAML the "
              "validator, the NumPy reference executor and the conformance suites use.",
        "zh": "本站每一页都由 ptospec 规格数据库生成：与校验器、NumPy 参考执行器和一致性测试套件使用的是同一份 YAML。",
    },
    "other_language": {"en": "中文版本", "zh": "English version"},
    "families": {"en": "Families", "zh": "指令族"},
    "family": {"en": "Family", "zh": "指令族"},
    "status-removed": {"en": "Removed upstream after the checked snapshot", "zh": "上游在所核对的快照之后已删除"},
    "status-renamed": {"en": "Renamed upstream after the checked snapshot", "zh": "上游在所核对的快照之后已改名"},
    "ops": {"en": "Instructions", "zh": "指令"},
    "op": {"en": "Instruction", "zh": "指令"},
    "summary": {"en": "Summary", "zh": "概述"},
    "description": {"en": "Description", "zh": "说明"},
    "modes": {"en": "Modes", "zh": "模式"},
    "mode": {"en": "Mode", "zh": "模式"},
    "operands": {"en": "Operands", "zh": "操作数"},
    "attributes": {"en": "Attributes", "zh": "属性"},
    "unspecified_pages": {"en": "Pages without a specification", "zh": "没有规格的页面"},
    "separate_isas": {"en": "Instruction sets beside the tile ISA", "zh": "Tile ISA 之外的指令集"},
    "header": {"en": "Header", "zh": "头文件"},
    "page": {"en": "Page", "zh": "页面"},
    "reason": {"en": "Reason", "zh": "原因"},
    "enum": {"en": "Enum", "zh": "枚举"},
    "enumerators": {"en": "Enumerators", "zh": "枚举值"},
    "name": {"en": "Name", "zh": "名称"},
    "role": {"en": "Role", "zh": "角色"},
    "type_var": {"en": "Type variable", "zh": "类型变量"},
    "meaning": {"en": "Meaning", "zh": "含义"},
    "kinds": {"en": "Kinds", "zh": "指令形态"},
    "params": {"en": "Parameters", "zh": "参数"},
    "default": {"en": "Default", "zh": "默认值"},
    "count": {"en": "Count", "zh": "数量"},
    "total": {"en": "Total", "zh": "合计"},
    "op_page": {"en": "Instruction page", "zh": "指令页面"},
    "domain": {"en": "defined for inputs x with", "zh": "输入 x 的定义域"},
    "attr_default": {"en": "default when an assembly line omits it:", "zh": "汇编行省略时的默认值："},
    "alias_view": {"en": "the instruction makes this tile a view of the storage of",
                   "zh": "指令使该 Tile 成为以下 Tile 存储的视图："},
    "alias_in_place": {"en": "in place: the caller gives this tile on the storage of",
                       "zh": "原地：调用者须把该 Tile 放在以下 Tile 的存储上："},
    "alias_at": {"en": "from byte", "zh": "起始字节"},
    "semantics": {"en": "Semantics", "zh": "语义"},
    "semantics_intro": {
        "en": "Rendered from the statements the reference executor runs. Index variables without a range "
              "run over the destination's valid region; elements outside it are left untouched.",
        "zh": "由参考执行器所执行的语句渲染而来。未给出范围的下标变量遍历目标的有效区域；区域外的元素保持不变。",
    },
    "count_note": {"en": "{count} is the number of {m} in that range for which {c} holds.",
                   "zh": "{count} 表示该范围内使 {c} 成立的 {m} 的个数。"},
    "definitions": {"en": "Definitions", "zh": "定义"},
    "no_data_semantics": {
        "en": "No data semantics (effect: {kind}). The validator checks the invocation; the reference executor "
              "changes no operand, and a conformance run checks that a backend accepts the instruction and "
              "leaves every operand unchanged.",
        "zh": "没有数据语义（效果：{kind}）。验证器检查调用；参考执行器不改变任何操作数，"
              "一致性测试检查后端接受该指令并保持所有操作数不变。",
    },
    "cross_core": {
        "en": "One side of a cross-core FIFO (effect: {kind}). The validator checks the invocation; the reference "
              "executor refuses to run it alone (rule `exec.cross-core`), and a conformance run checks the "
              "validator only, counting these cases apart.",
        "zh": "跨核 FIFO 的一侧（效果：{kind}）。验证器检查调用；参考执行器拒绝单独运行它（规则 `exec.cross-core`），"
              "一致性测试只检查验证器，并单独计数这些用例。",
    },
    "same_semantics": {"en": "The same statements as mode {mode}.", "zh": "语句与模式 {mode} 相同。"},
    "state_sets": {"en": "Configuration state it writes (read by a later instruction; a program keeps it until it is "
                         "set again):",
                   "zh": "它写入的配置状态（由之后的指令读取；程序中保持到再次设置为止）："},
    "state_reads": {"en": "Configuration state it reads, as an earlier instruction set it (`<register>.<field>` in "
                          "the statements; a single run takes it as an input):",
                    "zh": "它读取的配置状态，即之前的指令所设置的值（语句中写作 `<register>.<field>`；"
                          "单条指令运行时作为输入给出）："},
    "state_field": {"en": "Register field", "zh": "寄存器字段"},
    "state_register": {"en": "Register", "zh": "寄存器"},
    "state_fields": {"en": "Fields", "zh": "字段"},
    "as_written": {"en": "As written in the spec", "zh": "规格原文"},
    "dtypes": {"en": "Data types per profile", "zh": "各配置的数据类型"},
    "basis": {"en": "Basis", "zh": "依据"},
    "sources": {"en": "Sources", "zh": "来源"},
    "notes": {"en": "Notes", "zh": "备注"},
    "all_modes": {"en": "all", "zh": "全部"},
    "any": {"en": "any", "zh": "任意"},
    "layout_rules": {"en": "Tile types and layouts", "zh": "Tile 类型与布局"},
    "rule": {"en": "Rule", "zh": "规则"},
    "allowed": {"en": "Allowed", "zh": "允许"},
    "profiles": {"en": "Profiles", "zh": "配置"},
    "profile": {"en": "Profile", "zh": "配置"},
    "message": {"en": "Message", "zh": "说明"},
    "static_checks": {"en": "Static checks", "zh": "静态检查"},
    "runtime_checks": {"en": "Runtime checks", "zh": "运行时检查"},
    "check": {"en": "Check", "zh": "检查"},
    "rule_scope": {"en": "Rule (all profiles and modes unless limited)",
                   "zh": "规则（未注明限制时适用于所有 profile 与模式）"},
    "check_message": {"en": "Check, and the message when it fails", "zh": "检查条件，及其不成立时的说明"},
    "allowed_message": {"en": "Allowed, and the message otherwise", "zh": "允许的取值，及其他取值时的说明"},
    "when": {"en": "only when", "zh": "仅当"},
    "where": {"en": "where", "zh": "其中"},
    "tmp": {"en": "Scratch (tmp) tiles", "zh": "临时（tmp）Tile"},
    "usage": {"en": "Usage", "zh": "用法"},
    "sizing": {"en": "Sizing rules", "zh": "容量规则"},
    "assembly": {"en": "Assembly forms", "zh": "汇编形式"},
    "form_sync": {"en": "PTO-AS (synchronous)", "zh": "PTO-AS（同步）"},
    "form_ssa": {"en": "AS level 1 (SSA)", "zh": "AS 第 1 级（SSA）"},
    "form_dps": {"en": "AS level 2 (DPS)", "zh": "AS 第 2 级（DPS）"},
    "cpp": {"en": "C++ intrinsic", "zh": "C++ 内建函数"},
    "pipe_line": {"en": "**Pipe**: {pipe}: {units} (source {source}). The race detector (`--hazards`) orders it "
                        "against the other pipes only through synchronisation.",
                  "zh": "**流水线**：{pipe}：{units}（来源 {source}）。竞争检测（`--hazards`）只通过同步指令确定它与"
                        "其他流水线之间的先后。"},
    "examples": {"en": "Examples", "zh": "示例"},
    "example_intro": {
        "en": "Generated from the spec's example invocation on profile",
        "zh": "由规格中的示例调用生成，配置为",
    },
    "auto": {"en": "C++, auto (addresses assigned by the compiler)", "zh": "C++，自动模式（由编译器分配地址）"},
    "manual": {"en": "C++, manual (TASSIGN)", "zh": "C++，手动模式（TASSIGN）"},
    "asm_lines": {"en": "Assembly", "zh": "汇编"},
    "numerics": {"en": "Numerics", "zh": "数值行为"},
    "exact": {"en": "Exact dtypes", "zh": "精确比较的类型"},
    "exact_specials": {"en": "NaN, infinities and signed zeros defined on",
                       "zh": "NaN、无穷与有符号零有定义的 profile"},
    "profile_numerics": {"en": "Numerics", "zh": "数值行为"},
    "tolerance": {"en": "Tolerance", "zh": "容差"},
    "performance": {"en": "Performance", "zh": "性能"},
    "source": {"en": "Source", "zh": "来源"},
    "differences": {"en": "Recorded differences between sources", "zh": "已记录的来源差异"},
    "differences_page": {"en": "All recorded differences", "zh": "全部来源差异"},
    "program_page": {"en": "Programs: views, tile buffers, synchronisation", "zh": "程序：视图、Tile 缓冲区与同步"},
    "program_intro": {
        "en": "Kernels in the PTO assembler's dialect use these instructions around the tile instructions. "
              "Most have no C++ intrinsic of their own; ptospec check-program and run-program apply their "
              "rules (specs/program.yaml).",
        "zh": "以 PTO 汇编器方言编写的内核在 Tile 指令之外使用这些指令。它们大多没有自己的 C++ 接口；"
              "ptospec check-program 与 run-program 检查其规则（specs/program.yaml）。",
    },
    "syntax": {"en": "Syntax", "zh": "语法"},
    "default_marker": {"en": "default", "zh": "默认"},
    "per_dimension": {"en": "per dimension", "zh": "逐维"},
    "evidence": {"en": "Evidence", "zh": "依据"},
    "targets": {"en": "Targets", "zh": "目标架构"},
    "target_arch": {"en": "pto.target_arch", "zh": "pto.target_arch"},
    "synchronisation": {"en": "Synchronisation", "zh": "同步"},
    "dtype_spellings": {"en": "Element type spellings of the assembler", "zh": "汇编器的元素类型写法"},
    "module_checks": {"en": "Checks of a whole module", "zh": "整个模块的检查"},
    "memrefs": {"en": "The lowered form: memref operands", "zh": "降级形式：memref 操作数"},
    "differences_intro": {
        "en": "Where upstream documents, implementations and the simulator disagree, the spec records each "
              "claim and the resolution it adopts.",
        "zh": "上游文档、实现与仿真器之间存在分歧时，规格记录每一方的说法以及所采用的结论。",
    },
    "unimplemented_pages": {"en": "Upstream pages without an implementation", "zh": "没有实现的上游页面"},
    "unimplemented_intro": {
        "en": "These pages of the upstream tile-op reference describe an instruction that no header implements; "
              "the database records them so that every upstream page is accounted for "
              "(ptospec list --upstream PATH).",
        "zh": "上游 Tile 指令参考中的这些页面所描述的指令没有任何头文件实现；数据库记录它们，"
              "使每个上游页面都有着落（ptospec list --upstream PATH）。",
    },
    "upstream_page": {"en": "Page", "zh": "页面"},
    "page_says": {"en": "What the page says", "zh": "页面的说法"},
    "headers_show": {"en": "What the headers show", "zh": "头文件的情况"},
    "claims": {"en": "Claims", "zh": "各方说法"},
    "resolution": {"en": "Resolution", "zh": "结论"},
    "observed": {"en": "Shows in conformance runs on", "zh": "一致性测试中的表现"},
    "observed_modes": {"en": "modes", "zh": "模式"},
    "observed_rules": {"en": "for rules", "zh": "规则"},
    "observed_when": {"en": "when", "zh": "条件"},
    "kind": {"en": "Kind", "zh": "类别"},
    "matrix": {"en": "Data type matrix", "zh": "数据类型矩阵"},
    "matrix_intro": {
        "en": "For every instruction, mode and type variable: the profiles on which each data type is allowed.",
        "zh": "对每条指令、每种模式和每个类型变量：列出允许各数据类型的配置。",
    },
    "none": {"en": "none", "zh": "无"},
    "global_layouts": {"en": "Global tensor layouts", "zh": "全局张量布局"},
    "global_layouts_intro": {
        "en": "The layouts a view of global memory can name: the operands of kind global, written `gm, 16x16xf32, "
              "layout=nz` on the command line and `!pto.partition_tensor_view<16x16xf32>` in assembly, up to five "
              "dimensions with strides, an offset in their buffer and the buffer's size. Placement: the view "
              "element at tile position (r, c), where the reference executor models the layout. Profiles: those "
              "whose TLOAD/TSTORE implementation has a path for the layout.",
        "zh": "全局内存视图可以使用的布局：kind 为 global 的操作数，命令行写作 `gm, 16x16xf32, layout=nz`，"
              "汇编写作 `!pto.partition_tensor_view<16x16xf32>`，最多五维，带步长、在缓冲区中的偏移与缓冲区大小。"
              "放置方式：Tile 位置 (r, c) 上的视图元素（参考执行器为其建模的布局）。"
              "配置：其 TLOAD/TSTORE 实现对该布局有处理路径的 profile。",
    },
    "asm_spelling": {"en": "Assembly", "zh": "汇编写法"},
    "placement": {"en": "Placement", "zh": "放置方式"},
    "not_modelled": {"en": "not modelled", "zh": "未建模"},
    "global_operand": {"en": "operand kind global", "zh": "操作数种类 global"},
    "form": {"en": "Form", "zh": "形式"},
    "descriptor": {"en": "Tile descriptor", "zh": "Tile 描述"},
    "value": {"en": "Value", "zh": "取值"},
    "languages": {"en": "Languages", "zh": "语言"},
    "no_ops": {"en": "No instructions in this family yet.", "zh": "该指令族暂无指令。"},
    "count_differences": {"en": "differences", "zh": "条差异"},
    "database": {"en": "ptospec database", "zh": "ptospec 规格数据库"},
    "upstream": {"en": "checked against", "zh": "核对的上游版本"},
    "built": {"en": "built", "zh": "构建日期"},
    "permalink": {"en": "Permanent link", "zh": "永久链接"},
    "worked": {"en": "Worked example", "zh": "计算示例"},
    "worked_intro": {
        "en": "Computed by the reference executor when this page was generated, on profile",
        "zh": "生成本页时由参考执行器计算，配置为",
    },
    "worked_mode": {"en": "mode", "zh": "模式"},
    "valid_region": {"en": "valid", "zh": "有效区域"},
    "cropped": {"en": "first 16 rows/columns shown", "zh": "仅显示前 16 行/列"},
    "pad_value": {"en": "pad value", "zh": "填充值"},
    "worked_input": {"en": "Inputs", "zh": "输入"},
    "usage_notes": {"en": "Using it in a kernel", "zh": "在内核中使用"},
    "usage_asynchronous": {"en": "Asynchronous.", "zh": "异步。"},
    "usage_overload": {"en": "Overload.", "zh": "重载。"},
    "usage_cost": {"en": "Cost.", "zh": "开销。"},
    "no_worked_effect": {
        "en": "None can exist: {op} changes no operand (effect: {kind}), so there are no outputs to show; "
              "the Semantics section says what it does instead.",
        "zh": "无法给出：{op} 不改变任何操作数（效果：{kind}），没有可展示的输出；它的作用见“语义”一节。",
    },
    "no_worked_cross_core": {
        "en": "None can exist for one instruction alone: {op} is one side of a cross-core FIFO (effect: {kind}) "
              "and runs only with its partner in another kernel; `ptospec run-program --kernels CUBE,VECTOR` "
              "runs such a pair (see docs/programs.md).",
        "zh": "单条指令无法给出：{op} 是跨核 FIFO 的一侧（效果：{kind}），只能与另一个内核中的对应指令一起运行；"
              "`ptospec run-program --kernels CUBE,VECTOR` 可运行这样一对内核（见 docs/programs.md）。",
    },
    "buffer_caption": {
        "en": "{name}: a buffer of {size} {dtype} drawn in rows of {width} (the view's row stride); the view "
              "{rows}×{cols} at offset {offset}, strides {strides} (white, dashed outline); shaded elements are "
              "not read (a shaded row starts with its offset)",
        "zh": "{name}：{size} 个 {dtype} 的缓冲区，每行画 {width} 个（视图的行步长）；视图为 {rows}×{cols}，"
              "偏移 {offset}，步长 {strides}（白色、虚线框）；灰色元素不被读取（灰色行首标出其偏移）",
    },
    "storage_intro": {
        "en": "How these tiles are stored: a tile of 2 × 2 boxes of each type; the number in a box is its place "
              "in storage, the line runs through the elements of the first two boxes in storage order.",
        "zh": "这些 Tile 的存储方式：每种类型画一个 2 × 2 个分块的 Tile；块中的数字是该块在存储中的次序，"
              "折线按存储顺序穿过前两个块的元素。",
    },
    "storage_caption": {
        "en": "{loc} {dtype}, {order}: boxes of {br}×{bc} elements ({fractal}-byte fractal)",
        "zh": "{loc} {dtype}，{order}：每块 {br}×{bc} 个元素（{fractal} 字节分形）",
    },
    "worked_output": {"en": "Outputs", "zh": "输出"},
    "legend_valid": {"en": "valid region (dashed outline)", "zh": "有效区域（虚线框）"},
    "legend_outside": {"en": "outside the valid region: never read, or left untouched",
                       "zh": "有效区域之外：不读取，或保持不变"},
    "legend_written": {"en": "element written by the instruction", "zh": "本指令写入的元素"},
    "kind_defines": {"en": "with", "zh": "其中"},
    "expr_params_note": {
        "en": "Parameters that are expressions are shown as mathematics; the others (titles, C++ spellings, "
              "example types) appear in place on each instruction's page.",
        "zh": "表达式类参数以数学公式显示；其余参数（标题、C++ 写法、示例类型）在各指令页面的相应位置出现。",
    },
    "definition": {"en": "Definition", "zh": "定义"},
    "seed_source": {"en": "seed page (internal, not published)", "zh": "种子页面（内部资料，未公开）"},
    "filter": {"en": "Filter", "zh": "筛选"},
    "filter_placeholder": {"en": "words, e.g. tcolmin simulator", "zh": "关键词，例如 tcolmin 仿真器"},
    "all_kinds": {"en": "all kinds", "zh": "全部类别"},
    "shown": {"en": "records shown", "zh": "条记录"},
    "matrix_legend": {
        "en": "Each cell lists the profiles that allow the data type; an empty cell (—) means none. "
              "The header row and the first column stay in view while scrolling.",
        "zh": "每个单元格列出允许该数据类型的配置；“—”表示没有。滚动时表头和第一列保持可见。",
    },
    "nan": {"en": "NaN", "zh": "NaN"},
    "signed_zero": {"en": "signed zero", "zh": "带符号零"},
    "ties": {"en": "ties", "zh": "并列值"},
    "overflow": {"en": "overflow", "zh": "溢出"},
    "division_by_zero": {"en": "division by zero", "zh": "除以零"},
    "shift_out_of_range": {"en": "shift out of range", "zh": "移位越界"},
    "diff_kind_docs-conflict": {"en": "documents disagree", "zh": "文档之间不一致"},
    "diff_kind_docs-vs-implementation": {"en": "documentation vs implementation", "zh": "文档与实现不一致"},
    "diff_kind_simulator-divergence": {"en": "simulator diverges", "zh": "仿真器行为不同"},
    "diff_kind_simulator-bug": {"en": "simulator bug", "zh": "仿真器缺陷"},
    "diff_kind_seed-vs-upstream": {"en": "seed page vs upstream", "zh": "种子页面与上游不一致"},
    "diff_kind_spec-restriction": {"en": "the spec is stricter", "zh": "规范更严格"},
    "diff_kind_upstream-test": {"en": "an upstream test", "zh": "上游测试"},
}


def label(key: str, lang: str) -> str:
    return LABELS[key][lang]


def text(mapping: dict[str, str] | None, lang: str) -> str:
    """Prose from the spec in ``lang``, falling back to English."""
    if not mapping:
        return ""
    return mapping.get(lang) or mapping.get("en", "")
